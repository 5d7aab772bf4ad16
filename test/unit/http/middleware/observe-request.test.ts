import * as route from '../../../../lib/http/routes.js';
import { createHash } from 'node:crypto';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../../../lib/identity/principal.js';
import { captureOutput } from '../../../support/captured-output.js';
import { lambdaContext, proxyEvent } from '../../../support/lambda-event.js';

// The Logger and the metrics read their settings when they load, so the modules are imported after these.
Object.assign(process.env, {
  LOG_LEVEL: 'INFO',
  POWERTOOLS_SERVICE_NAME: 'TestStack',
  POWERTOOLS_METRICS_DISABLED: 'false',
  AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
});

const SECRET_PAT = 'svpat_Zm9vYmFyYmF6cXV4c2VjcmV0dmFsdWUxMjM0NTY3ODkw';
const pat: Principal = {
  userId: 'u-1',
  role: 'user',
  kind: 'pat',
  scopes: ['containers:read', 'containers:write', 'account'],
  credentialHash: createHash('sha256').update(SECRET_PAT).digest('hex'),
  expiresAt: '2999-01-01T00:00:00.000Z',
};

type Handler = (event: never, context: never) => Promise<APIGatewayProxyResult>;
let deleteToken: Handler;
let getMe: Handler;

beforeAll(async () => {
  const { endpoint } = await import('../../../../lib/http/endpoint.js');
  const { ok } = await import('../../../../lib/http/reply.js');
  const { log } = await import('../../../../lib/log.js');
  const { QuotaExceededError } = await import('../../../../lib/errors.js');
  const resolveCredential = async (token: string) => (token === SECRET_PAT ? { principal: pat } : undefined);
  deleteToken = endpoint(route.deleteToken, { resolveCredential }, async ({ params }) => {
    log.warn('Deleting a token', { tokenId: params.token_id });
    return ok('deleted');
  });
  getMe = endpoint(route.getMe, { resolveCredential }, async () => {
    throw new QuotaExceededError('Quota exceeded');
  });
});

const context = (awsRequestId: string) => ({ ...lambdaContext(), awsRequestId });
const tokenId = '0190e3a0-0000-7000-8000-000000000001';
const deleteEvent = (apiRequestId: string, authorization: string) =>
  proxyEvent({
    method: 'DELETE',
    path: `/api/v1/tokens/${tokenId}`,
    pathParameters: { token_id: tokenId },
    headers: { Authorization: authorization },
    requestContext: { ...proxyEvent().requestContext, requestId: apiRequestId },
  });

describe('request logging (Powertools Logger)', () => {
  it('writes JSON lines that all carry both request ids, one line per request with route, status, duration and principal kind', async () => {
    // Prepare
    const output = captureOutput();
    // Act
    let response: APIGatewayProxyResult;
    try {
      response = await deleteToken(deleteEvent('api-req-1', `Bearer ${SECRET_PAT}`) as never, context('lambda-req-1') as never);
    } finally {
      output.restore();
    }
    // Assess
    expect(response.statusCode).toBe(200);
    const lines = output.lines().filter((line) => line.level !== undefined);
    expect(lines.map((line) => line.message)).toEqual(['Deleting a token', 'Request handled']);
    for (const line of lines) {
      expect(line).toMatchObject({ service: 'TestStack', function_request_id: 'lambda-req-1', api_request_id: 'api-req-1' });
      expect(typeof line.timestamp).toBe('string');
    }
    expect(lines[0]).toMatchObject({ level: 'WARN', tokenId, cold_start: true, function_name: 'test' });
    const summary = lines[1]!;
    expect(summary).toMatchObject({ level: 'INFO', route: 'deleteToken', method: 'DELETE', status: 200, principal: 'pat' });
    expect(summary.durationMs).toEqual(expect.any(Number));
    // Nothing secret: neither the token nor its hash, nor the header it came in.
    expect(output.text()).not.toContain(SECRET_PAT);
    expect(output.text()).not.toContain(pat.credentialHash);
    expect(output.text().toLowerCase()).not.toContain('bearer');
  });

  it('logs the final status of a refused request, as anonymous, with that request’s ids and no cold start', async () => {
    // Prepare
    const output = captureOutput();
    // Act
    let response: APIGatewayProxyResult;
    try {
      response = await deleteToken(deleteEvent('api-req-2', 'Bearer svpat_wrong-and-secret') as never, context('lambda-req-2') as never);
    } finally {
      output.restore();
    }
    // Assess
    expect(response.statusCode).toBe(401);
    const [summary, ...others] = output.lines().filter((line) => line.level !== undefined);
    expect(others).toEqual([]);
    expect(summary).toMatchObject({
      message: 'Request handled',
      route: 'deleteToken',
      status: 401,
      principal: 'anonymous',
      function_request_id: 'lambda-req-2',
      api_request_id: 'api-req-2',
      cold_start: false,
    });
    expect(output.text()).not.toContain('svpat_wrong-and-secret');
  });
});

describe('request metrics (Powertools Metrics, EMF)', () => {
  it('counts each request by route and status class, and a quota refusal, as EMF lines', async () => {
    // Prepare
    const output = captureOutput();
    // Act
    try {
      await deleteToken(deleteEvent('api-req-3', `Bearer ${SECRET_PAT}`) as never, context('lambda-req-3') as never);
      await getMe(
        proxyEvent({ method: 'GET', path: '/api/v1/users/me', headers: { Authorization: `Bearer ${SECRET_PAT}` } }) as never,
        context('lambda-req-4') as never,
      );
    } finally {
      output.restore();
    }
    // Assess
    const emf = output.lines().filter((line) => line._aws !== undefined);
    const requests = emf.filter((line) => line.Requests !== undefined);
    expect(requests.map(({ route, statusClass, Requests }) => ({ route, statusClass, Requests }))).toEqual([
      { route: 'deleteToken', statusClass: '2xx', Requests: 1 },
      { route: 'getMe', statusClass: '4xx', Requests: 1 },
    ]);
    for (const line of requests) {
      expect(line._aws.CloudWatchMetrics).toEqual([
        {
          Namespace: 'ContainerHosting',
          Dimensions: [['service', 'route', 'statusClass']],
          Metrics: [{ Name: 'Requests', Unit: 'Count' }],
        },
      ]);
      expect(line.service).toBe('TestStack');
    }
    const refusals = emf.filter((line) => line.QuotaRefusals !== undefined);
    expect(refusals).toHaveLength(1);
    expect(refusals[0]!._aws.CloudWatchMetrics[0].Dimensions).toEqual([['service']]);
  });
});
