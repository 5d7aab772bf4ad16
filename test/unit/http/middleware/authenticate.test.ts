import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import { endpoint } from '../../../../lib/http/endpoint.js';
import { ok } from '../../../../lib/http/reply.js';
import * as route from '../../../../lib/http/routes.js';
import type { Authentication } from '../../../../lib/identity/authentication.js';
import type { Principal } from '../../../../lib/identity/principal.js';
import { lambdaContext, proxyEvent } from '../../../support/lambda-event.js';

/** proxyEvent's stage URL: the service's address when PUBLIC_BASE_URL is unset (lib/http/public-base-url.ts). */
const ISSUER = 'http://localhost/prod';

const oauth: Principal = {
  userId: 'u-1',
  role: 'user',
  kind: 'oauth',
  scopes: ['containers:read', 'containers:write'],
  credentialHash: 'h',
  expiresAt: '2999-01-01T00:00:00.000Z',
  clientId: 'c-1',
};

const resolve = vi.fn(async (token: string): Promise<Authentication | undefined> => {
  const principals: Record<string, Principal> = {
    svat_unbound: oauth,
    svat_api: { ...oauth, resource: 'api' },
    svat_mcp: { ...oauth, resource: 'mcp' },
    svat_read: { ...oauth, resource: 'api', scopes: ['containers:read'] },
    svpat_pat: { ...oauth, kind: 'pat', scopes: ['containers:read', 'containers:write', 'account'] },
  };
  return principals[token] ? { principal: principals[token]! } : undefined;
});

const listContainers = endpoint(route.listContainers, { resolveCredential: resolve }, async () => ok([]));
const createContainer = endpoint(route.createContainer, { resolveCredential: resolve }, async () => ok('created'));

async function call(
  handler: (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>,
  token: string | undefined,
  method = 'GET',
) {
  const event = proxyEvent({
    method,
    path: '/api/v1/containers',
    headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), 'Content-Type': 'application/json' },
    body: method === 'POST' ? '{}' : null,
  });
  const result: APIGatewayProxyResult = await handler(event, lambdaContext());
  return { status: result.statusCode, challenge: result.headers?.['WWW-Authenticate'], body: JSON.parse(result.body) };
}

describe('the REST API’s audience (RFC 8707)', () => {
  it('takes OAuth access tokens bound to it, and those minted without resource as before', async () => {
    expect((await call(listContainers, 'svat_api')).status).toBe(200);
    expect((await call(listContainers, 'svat_unbound')).status).toBe(200);
    expect((await call(listContainers, 'svpat_pat')).status).toBe(200);
  });

  it('refuses an access token bound to the MCP server as an invalid token, pointing at its own metadata', async () => {
    const refused = await call(listContainers, 'svat_mcp');

    expect(refused.status).toBe(401);
    expect(refused.body.error).toEqual({ code: 'UNAUTHORIZED', message: 'This access token was issued for another resource' });
    expect(refused.challenge).toBe(
      `Bearer error="invalid_token", scope="containers:read", resource_metadata="${ISSUER}/.well-known/oauth-protected-resource"`,
    );
  });

  it('challenges a request without a token with no error code (RFC 6750 section 3.1)', async () => {
    const refused = await call(listContainers, undefined);

    expect(refused.status).toBe(401);
    expect(refused.challenge).toBe(`Bearer scope="containers:read", resource_metadata="${ISSUER}/.well-known/oauth-protected-resource"`);
  });

  it('answers a token short of the route’s scope 403 with error="insufficient_scope" and the scope it needs', async () => {
    const refused = await call(createContainer, 'svat_read', 'POST');

    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('FORBIDDEN');
    expect(refused.challenge).toBe(
      `Bearer error="insufficient_scope", scope="containers:write", resource_metadata="${ISSUER}/.well-known/oauth-protected-resource"`,
    );
  });
});
