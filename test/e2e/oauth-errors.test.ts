import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, errorEnvelope, signedInUser, type ApiResponse, type SignedInUser } from '../support/api-client.js';
import { useStack } from '../support/local-stack.js';
import { authorizationCode, basicAuthorization, formBody, issuedTokens, registerApp, type RegisteredApp } from '../support/oauth-flow.js';

/**
 * Every error of the token and revocation endpoints, sent once form-encoded (RFC 6749 section
 * 5.2 body) and once as JSON (the service's envelope): docs/oauth.md, "Error behaviour".
 */

const REDIRECT_URI = 'http://127.0.0.1:8765/callback';
const TOKEN = '/api/v1/oauth/token';
const REVOKE = '/api/v1/oauth/token/revoke';

const stack = useStack();
let owner: SignedInUser;
let person: SignedInUser;
let app: RegisteredApp;
let otherApp: RegisteredApp;

beforeAll(async () => {
  owner = await signedInUser(stack.baseUrl);
  person = await signedInUser(stack.baseUrl);
  app = await registerApp(stack.baseUrl, owner, { name: 'Dashboard', redirect_uris: [REDIRECT_URI] });
  otherApp = await registerApp(stack.baseUrl, owner, { name: 'Other', redirect_uris: [REDIRECT_URI] });
});

type Format = 'form' | 'json';

interface ErrorCase {
  path: string;
  parameters: Record<string, string>;
  /** Client credentials as HTTP Basic, instead of client_id and client_secret in the body. */
  basic?: [string, string];
  /** Raw form body, for what JSON cannot express (a repeated parameter). */
  rawForm?: string;
}

const post = (format: Format, { path, parameters, basic, rawForm }: ErrorCase): Promise<ApiResponse> => {
  const headers: Record<string, string> = basic ? { authorization: basicAuthorization(...basic) } : {};
  if (format === 'json') return call(stack.baseUrl, 'POST', path, { headers, body: parameters });
  return call(stack.baseUrl, 'POST', path, {
    headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
    rawBody: rawForm ?? formBody(parameters),
  });
};

const credentials = (forApp: RegisteredApp = app) => ({ client_id: forApp.client_id, client_secret: forApp.client_secret });
const freshCode = () => authorizationCode(stack.baseUrl, person, app);
const exchange = async () => ({ grant_type: 'authorization_code', code: await freshCode(), redirect_uri: REDIRECT_URI });
const tokens = (scope?: string) => issuedTokens(stack.baseUrl, person, app, scope);

/** Each case builds its request afresh, so that both formats meet the same state. */
const cases: Array<[string, string, 400 | 401, () => Promise<ErrorCase>]> = [
  // Token endpoint: client authentication first (401 invalid_client).
  [
    'token: a wrong secret',
    'invalid_client',
    401,
    async () => ({ path: TOKEN, parameters: { ...(await exchange()), ...credentials(), client_secret: 'svcs_wrong' } }),
  ],
  [
    'token: an unknown client_id',
    'invalid_client',
    401,
    async () => ({ path: TOKEN, parameters: { ...(await exchange()), client_id: randomUUID(), client_secret: app.client_secret } }),
  ],
  [
    'token: a client_id that is not a UUID',
    'invalid_client',
    401,
    async () => ({ path: TOKEN, parameters: { ...(await exchange()), client_id: 'dashboard', client_secret: 'x' } }),
  ],
  ['token: no client credentials', 'invalid_client', 401, async () => ({ path: TOKEN, parameters: await exchange() })],
  [
    'token: a wrong secret over HTTP Basic',
    'invalid_client',
    401,
    async () => ({ path: TOKEN, parameters: await exchange(), basic: [app.client_id, 'svcs_wrong'] }),
  ],
  [
    'token: a bad secret and a bad grant_type (credentials first)',
    'invalid_client',
    401,
    async () => ({ path: TOKEN, parameters: { grant_type: 'password', ...credentials(), client_secret: 'x' } }),
  ],
  // Token endpoint: the request itself.
  [
    'token: Basic and body credentials together',
    'invalid_request',
    400,
    async () => ({ path: TOKEN, parameters: { ...(await exchange()), ...credentials() }, basic: [app.client_id, app.client_secret] }),
  ],
  [
    'token: no grant_type',
    'invalid_request',
    400,
    async () => ({ path: TOKEN, parameters: { code: await freshCode(), redirect_uri: REDIRECT_URI, ...credentials() } }),
  ],
  [
    'token: no code',
    'invalid_request',
    400,
    async () => ({ path: TOKEN, parameters: { grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, ...credentials() } }),
  ],
  [
    'token: no redirect_uri',
    'invalid_request',
    400,
    async () => ({ path: TOKEN, parameters: { grant_type: 'authorization_code', code: await freshCode(), ...credentials() } }),
  ],
  [
    'token: no refresh_token',
    'invalid_request',
    400,
    async () => ({ path: TOKEN, parameters: { grant_type: 'refresh_token', ...credentials() } }),
  ],
  [
    'token: an unsupported grant_type',
    'unsupported_grant_type',
    400,
    async () => ({ path: TOKEN, parameters: { grant_type: 'client_credentials', ...credentials() } }),
  ],
  [
    'token: an unknown code',
    'invalid_grant',
    400,
    async () => ({ path: TOKEN, parameters: { ...(await exchange()), code: 'x'.repeat(43), ...credentials() } }),
  ],
  [
    'token: a mismatched redirect_uri',
    'invalid_grant',
    400,
    async () => ({ path: TOKEN, parameters: { ...(await exchange()), redirect_uri: 'http://127.0.0.1:8765/other', ...credentials() } }),
  ],
  [
    'token: a code_verifier for a code without a challenge',
    'invalid_grant',
    400,
    async () => ({ path: TOKEN, parameters: { ...(await exchange()), code_verifier: 'v'.repeat(43), ...credentials() } }),
  ],
  [
    "token: another client's code",
    'invalid_grant',
    400,
    async () => ({ path: TOKEN, parameters: { ...(await exchange()), ...credentials(otherApp) } }),
  ],
  [
    'token: a code used twice',
    'invalid_grant',
    400,
    async () => {
      const parameters = { ...(await exchange()), ...credentials() };
      expect((await call(stack.baseUrl, 'POST', TOKEN, { body: parameters })).status).toBe(200);
      return { path: TOKEN, parameters };
    },
  ],
  [
    'token: an unknown refresh token',
    'invalid_grant',
    400,
    async () => ({ path: TOKEN, parameters: { grant_type: 'refresh_token', refresh_token: `svrt_${'x'.repeat(43)}`, ...credentials() } }),
  ],
  [
    'token: a rotated refresh token whose successor was used',
    'invalid_grant',
    400,
    async () => {
      const parameters = { grant_type: 'refresh_token', refresh_token: (await tokens()).refresh_token, ...credentials() };
      const rotated = await call(stack.baseUrl, 'POST', TOKEN, { body: parameters });
      expect(rotated.status).toBe(200);
      const successor = { ...parameters, refresh_token: rotated.body.refresh_token as string };
      expect((await call(stack.baseUrl, 'POST', TOKEN, { body: successor })).status).toBe(200);
      return { path: TOKEN, parameters };
    },
  ],
  [
    "token: another client's refresh token",
    'invalid_grant',
    400,
    async () => ({
      path: TOKEN,
      parameters: { grant_type: 'refresh_token', refresh_token: (await tokens()).refresh_token, ...credentials(otherApp) },
    }),
  ],
  [
    'token: a refresh asking for more scope than granted',
    'invalid_scope',
    400,
    async () => ({
      path: TOKEN,
      parameters: {
        grant_type: 'refresh_token',
        refresh_token: (await tokens('containers:read')).refresh_token,
        scope: 'containers:read containers:write',
        ...credentials(),
      },
    }),
  ],
  [
    'token: a refresh asking for an unknown scope',
    'invalid_scope',
    400,
    async () => ({
      path: TOKEN,
      parameters: { grant_type: 'refresh_token', refresh_token: (await tokens()).refresh_token, scope: 'admin', ...credentials() },
    }),
  ],
  // Revocation endpoint (RFC 7009).
  [
    'revoke: a wrong secret',
    'invalid_client',
    401,
    async () => ({ path: REVOKE, parameters: { token: (await tokens()).refresh_token, ...credentials(), client_secret: 'svcs_wrong' } }),
  ],
  [
    'revoke: a wrong secret over HTTP Basic',
    'invalid_client',
    401,
    async () => ({ path: REVOKE, parameters: { token: (await tokens()).refresh_token }, basic: [app.client_id, 'svcs_wrong'] }),
  ],
  ['revoke: no token', 'invalid_request', 400, async () => ({ path: REVOKE, parameters: credentials() })],
  [
    'revoke: token and refresh_token that differ',
    'invalid_request',
    400,
    async () => ({ path: REVOKE, parameters: { token: 'svrt_a', refresh_token: 'svrt_b', ...credentials() } }),
  ],
  [
    "revoke: another client's refresh token",
    'unauthorized_client',
    400,
    async () => ({ path: REVOKE, parameters: { token: (await tokens()).refresh_token, ...credentials(otherApp) } }),
  ],
  [
    "revoke: another client's access token",
    'unauthorized_client',
    400,
    async () => ({ path: REVOKE, parameters: { token: (await tokens()).access_token, ...credentials(otherApp) } }),
  ],
  [
    'revoke: a session token',
    'unsupported_token_type',
    400,
    async () => ({ path: REVOKE, parameters: { token: person.sessionToken, ...credentials() } }),
  ],
  [
    'revoke: a token_type_hint of another type',
    'unsupported_token_type',
    400,
    async () => ({ path: REVOKE, parameters: { token: 'svrt_x', token_type_hint: 'id_token', ...credentials() } }),
  ],
];

describe('a form-encoded request gets RFC 6749 section 5.2 errors', () => {
  it.each(cases)('%s: %s, %i', async (_name, oauthCode, status, build) => {
    const request = await build();
    const response = await post('form', request);

    expect(response.status).toBe(status);
    expect(response.body).toEqual({ error: oauthCode, error_description: expect.stringMatching(/^[\x20-\x21\x23-\x5b\x5d-\x7e]+$/) });
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('www-authenticate')).toBe(request.basic && status === 401 ? 'Basic realm="oauth", charset="UTF-8"' : null);
  });

  it('a repeated parameter: invalid_request, 400', async () => {
    const response = await post('form', { path: TOKEN, parameters: {}, rawForm: 'grant_type=refresh_token&grant_type=authorization_code' });
    expect(response).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
  });
});

describe('a JSON request keeps the envelope', () => {
  it.each(cases)('%s: envelope for %s, %i', async (_name, _oauthCode, status, build) => {
    const request = await build();
    const response = await post('json', request);

    expect(response.status).toBe(status);
    expect(response.body).toEqual(errorEnvelope(status === 401 ? 'UNAUTHORIZED' : 'BAD_REQUEST'));
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('www-authenticate')).toBe(request.basic && status === 401 ? 'Basic realm="oauth", charset="UTF-8"' : null);
  });

  it('a parameter that is not a string: BAD_REQUEST, 400', async () => {
    const response = await call(stack.baseUrl, 'POST', TOKEN, { body: { ...(await exchange()), ...credentials(), code: 42 } });
    expect(response).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });
  });
});
