import type { APIGatewayProxyResult } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import * as z from '../../../lib/zod.js';
import { endpoint } from '../../../lib/http/endpoint.js';
import * as route from '../../../lib/http/routes.js';
import { ok } from '../../../lib/http/reply.js';
import type { Authentication } from '../../../lib/identity/authentication.js';
import type { Principal } from '../../../lib/identity/principal.js';
import { lambdaContext, proxyEvent } from '../../support/lambda-event.js';

const session: Principal = {
  userId: 'u-1',
  role: 'user',
  kind: 'session',
  scopes: ['containers:read', 'containers:write', 'account'],
  credentialHash: 'h',
  expiresAt: '2999-01-01T00:00:00.000Z',
  csrfToken: 'csrf-good',
};
const pat: Principal = { ...session, kind: 'pat', csrfToken: undefined };
const oauthReadOnly: Principal = { ...session, kind: 'oauth', scopes: ['containers:read'], csrfToken: undefined };

function resolverFor(principals: Record<string, Principal>) {
  return vi.fn(
    async (token: string): Promise<Authentication | undefined> => (principals[token] ? { principal: principals[token]! } : undefined),
  );
}

const patReadOnly: Principal = { ...pat, scopes: ['containers:read'] };
const resolve = resolverFor({
  svss_session: session,
  svpat_pat: pat,
  svpat_readonly: patReadOnly,
  svat_oauth: oauthReadOnly,
  svpat_admin: { ...pat, role: 'admin' },
  svpat_admin_containers: { ...pat, role: 'admin', scopes: ['containers:read', 'containers:write'] },
});

async function call(handler: (event: never, context: never) => Promise<APIGatewayProxyResult>, event: object) {
  const result = await handler(event as never, lambdaContext() as never);
  return { status: result.statusCode, body: JSON.parse(result.body), headers: result.headers ?? {} };
}

const createToken = endpoint(
  route.createToken,
  { body: z.strictObject({ name: z.string().check(z.minLength(1)) }), resolveCredential: resolve },
  async ({ body }) => ok({ echoed: body.name }),
);
const deleteToken = endpoint(route.deleteToken, { resolveCredential: resolve }, async ({ params }) => ok(params.token_id));
const createUser = endpoint(route.createUser, { resolveCredential: resolve }, async () => ok('created'));
const getCurrentSession = endpoint(route.getCurrentSession, { resolveCredential: resolve }, async () => ok('session'));

const jsonPost = (body: string, headers: Record<string, string> = {}) =>
  proxyEvent({ method: 'POST', path: '/api/v1/tokens', body, headers: { 'Content-Type': 'application/json', ...headers } });

describe('endpoint middleware chain', () => {
  it('answers 401 UNAUTHORIZED in the envelope when no credential is sent', async () => {
    const response = await call(createToken, jsonPost('{"name":"x"}'));
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ error: { code: 'UNAUTHORIZED', message: expect.any(String) } });
  });

  it('answers 401 for an unknown token and for a malformed Authorization header', async () => {
    expect((await call(createToken, jsonPost('{"name":"x"}', { Authorization: 'Bearer svpat_nope' }))).status).toBe(401);
    expect((await call(createToken, jsonPost('{"name":"x"}', { Authorization: 'Basic abc' }))).status).toBe(401);
  });

  it('checks credentials before the body: a bad body without credentials is still 401', async () => {
    expect((await call(createToken, jsonPost('{not json'))).status).toBe(401);
  });

  it('refuses a session POST without x-csrf-token with 403 CSRF_REJECTED, before validating the body', async () => {
    const response = await call(createToken, jsonPost('{not json', { Authorization: 'Bearer svss_session' }));
    expect(response.status).toBe(403);
    expect(response.body.error.code).toBe('CSRF_REJECTED');
  });

  it('refuses a session POST whose x-csrf-token is wrong', async () => {
    const response = await call(
      createToken,
      jsonPost('{"name":"x"}', { Authorization: 'Bearer svss_session', 'X-CSRF-Token': 'csrf-bad' }),
    );
    expect(response.body.error.code).toBe('CSRF_REJECTED');
  });

  it('accepts a session POST from the cookie with the right x-csrf-token', async () => {
    const response = await call(
      createToken,
      jsonPost('{"name":"x"}', { Cookie: 'other=1; sv_session=svss_session', 'x-csrf-token': 'csrf-good' }),
    );
    expect(response).toMatchObject({ status: 200, body: { data: { echoed: 'x' } } });
  });

  it('exempts personal access tokens from CSRF', async () => {
    const response = await call(createToken, jsonPost('{"name":"x"}', { Authorization: 'Bearer svpat_pat' }));
    expect(response.status).toBe(200);
  });

  it('answers 403 FORBIDDEN to an OAuth access token on an account endpoint', async () => {
    const response = await call(createToken, jsonPost('{"name":"x"}', { Authorization: 'Bearer svat_oauth' }));
    expect(response).toMatchObject({ status: 403, body: { error: { code: 'FORBIDDEN' } } });
  });

  it('answers 403 FORBIDDEN to a non-admin on an admin endpoint and lets an admin through', async () => {
    const asUser = (token: string) =>
      proxyEvent({
        method: 'POST',
        path: '/api/v1/users',
        body: '{}',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      });
    expect((await call(createUser, asUser('svpat_pat'))).body.error.code).toBe('FORBIDDEN');
    const asAdmin = asUser('svpat_admin');
    expect((await call(createUser, asAdmin)).status).toBe(200);
  });

  it('answers 403 FORBIDDEN to a PAT without the account scope on account and admin endpoints (issue 18)', async () => {
    const readOnly = await call(createToken, jsonPost('{"name":"x"}', { Authorization: 'Bearer svpat_readonly' }));
    expect(readOnly).toMatchObject({ status: 403, body: { error: { code: 'FORBIDDEN', message: 'This token lacks the account scope' } } });
    const adminEvent = proxyEvent({
      method: 'POST',
      path: '/api/v1/users',
      body: '{}',
      headers: { Authorization: 'Bearer svpat_admin_containers', 'Content-Type': 'application/json' },
    });
    expect((await call(createUser, adminEvent)).body.error.code).toBe('FORBIDDEN');
  });

  it('answers 403 FORBIDDEN to a PAT on a session-only endpoint', async () => {
    const event = proxyEvent({ path: '/api/v1/sessions/current', headers: { Authorization: 'Bearer svpat_pat' } });
    expect((await call(getCurrentSession, event)).body.error.code).toBe('FORBIDDEN');
  });

  it.each([
    ['invalid JSON', '{"name":', 'not valid JSON'],
    ['a JSON array', '[1]', 'JSON object'],
    ['an unknown field', '{"name":"x","extra":1}', 'extra'],
    ['a missing field', '{}', 'name'],
  ])('answers 400 BAD_REQUEST for %s', async (_case, body, messagePart) => {
    const response = await call(createToken, jsonPost(body, { Authorization: 'Bearer svpat_pat' }));
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('BAD_REQUEST');
    expect(response.body.error.message).toContain(messagePart);
  });

  it.each([
    ['a 5,000-deep array', `${'['.repeat(5000)}${']'.repeat(5000)}`],
    ['a 2,000-deep object (within 16 KiB)', `${'{"a":'.repeat(2000)}1${'}'.repeat(2000)}`],
    ['a field nested 33 deep', `{"name":${'['.repeat(32)}${']'.repeat(32)}}`],
  ])('answers 400 BAD_REQUEST naming the nesting limit for %s, before anything walks it', async (_case, body) => {
    // Act
    const response = await call(createToken, jsonPost(body, { Authorization: 'Bearer svpat_pat' }));
    // Assess
    expect(response).toEqual({
      status: 400,
      headers: expect.anything(),
      body: { error: { code: 'BAD_REQUEST', message: 'The request body nests arrays and objects more than 32 levels deep' } },
    });
  });

  it('reads a body nested 32 deep, and brackets inside strings do not count', async () => {
    // Prepare: the schema's own answer shows the body got past the nesting limit.
    const deepest = `{"name":${'['.repeat(31)}${']'.repeat(31)}}`;
    const bracketsInAString = JSON.stringify({ name: `${'['.repeat(100)}\\"{{{` });
    // Act
    const deep = await call(createToken, jsonPost(deepest, { Authorization: 'Bearer svpat_pat' }));
    const quoted = await call(createToken, jsonPost(bracketsInAString, { Authorization: 'Bearer svpat_pat' }));
    // Assess
    expect(deep).toMatchObject({ status: 400, body: { error: { code: 'BAD_REQUEST', details: [{ field: 'name' }] } } });
    expect(quoted).toMatchObject({ status: 200, body: { data: { echoed: `${'['.repeat(100)}\\"{{{` } } });
  });

  it('answers 400 when the body is not sent as JSON', async () => {
    const event = jsonPost('name=x', { Authorization: 'Bearer svpat_pat', 'Content-Type': 'text/plain' });
    expect((await call(createToken, event)).body.error.code).toBe('BAD_REQUEST');
  });

  it('answers 413 PAYLOAD_TOO_LARGE for a body over 16 KiB', async () => {
    const body = JSON.stringify({ name: 'x'.repeat(16 * 1024) });
    const response = await call(createToken, jsonPost(body, { Authorization: 'Bearer svpat_pat' }));
    expect(response).toMatchObject({ status: 413, body: { error: { code: 'PAYLOAD_TOO_LARGE' } } });
  });

  it('answers 404 NOT_FOUND for a path id that is not a UUID', async () => {
    const event = proxyEvent({
      method: 'DELETE',
      path: '/api/v1/tokens/abc',
      pathParameters: { token_id: 'abc' },
      headers: { Authorization: 'Bearer svpat_pat' },
    });
    expect((await call(deleteToken, event)).body.error.code).toBe('NOT_FOUND');
  });

  it('answers a missing file of ours with 500 INTERNAL_ERROR, not as a service to try again', async () => {
    const failing = endpoint(route.getMe, { resolveCredential: resolve }, async () => {
      throw Object.assign(new Error("ENOENT: no such file or directory, open '/secret-detail'"), { code: 'ENOENT', syscall: 'open' });
    });
    const response = await call(failing, proxyEvent({ path: '/api/v1/users/me', headers: { Authorization: 'Bearer svpat_pat' } }));
    expect(response.status).toBe(500);
    expect(JSON.stringify(response)).not.toContain('secret-detail');
  });

  it('answers an unexpected failure with 500 INTERNAL_ERROR and no internal detail', async () => {
    const failing = endpoint(route.getMe, { resolveCredential: resolve }, async () => {
      throw new Error('connect ECONNREFUSED 10.0.0.7:8000 secret-detail');
    });
    const response = await call(failing, proxyEvent({ path: '/api/v1/users/me', headers: { Authorization: 'Bearer svpat_pat' } }));
    expect(response.status).toBe(500);
    expect(response.body).toEqual({ error: { code: 'INTERNAL_ERROR', message: 'Internal server error' } });
    expect(JSON.stringify(response)).not.toContain('secret-detail');
  });

  it('answers 503 SERVICE_BUSY with Retry-After when an AWS call failed transiently past the SDK’s retries', async () => {
    const failures = [
      // @smithy/node-http-handler's error for a connection reset under load, as the fault run met it.
      Object.assign(new Error('socket hang up secret-detail'), { name: 'TimeoutError' }),
      Object.assign(new Error('read ECONNRESET secret-detail'), { code: 'ECONNRESET' }),
      // The local engine's socket file absent (Podman not running), as a volume's create on the local stack met it.
      Object.assign(new Error('connect ENOENT /tmp/secret-detail.sock'), { code: 'ENOENT', syscall: 'connect' }),
      // A 5xx the service answered (DynamoDB's InternalServerError), its retries spent.
      Object.assign(new Error('Internal server error secret-detail'), {
        name: 'InternalServerError',
        $fault: 'server',
        $metadata: { httpStatusCode: 500 },
      }),
    ];
    for (const failure of failures) {
      const failing = endpoint(route.getMe, { resolveCredential: resolve }, async () => {
        throw failure;
      });
      const response = await call(failing, proxyEvent({ path: '/api/v1/users/me', headers: { Authorization: 'Bearer svpat_pat' } }));
      expect(response).toMatchObject({ status: 503, body: { error: { code: 'SERVICE_BUSY' } }, headers: { 'Retry-After': '5' } });
      expect(JSON.stringify(response)).not.toContain('secret-detail');
    }
  });

  it('answers 504 TIMEOUT in the envelope when the function is about to run out of time', async () => {
    const slow = endpoint(route.getMe, { resolveCredential: resolve }, () => new Promise(() => {}));
    const result = await slow(
      proxyEvent({ path: '/api/v1/users/me', headers: { Authorization: 'Bearer svpat_pat' } }) as never,
      lambdaContext(600) as never,
    );
    expect(result.statusCode).toBe(504);
    expect(JSON.parse(result.body).error.code).toBe('TIMEOUT');
  });

  it('marks every response no-sniff and carries the request id', async () => {
    const response = await call(createToken, jsonPost('{"name":"x"}', { Authorization: 'Bearer svpat_pat' }));
    expect(response.headers).toMatchObject({ 'X-Content-Type-Options': 'nosniff', 'X-Request-Id': 'req-test' });
  });
});
