import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../lib/http/routes.js';
import { grantIdOf, sha256Hex } from '../../lib/identity/secrets.js';
import { s256CodeChallenge } from '../../lib/oauth/pkce.js';
import { documentClient, tableName } from '../../lib/store/dynamo.js';
import { keys } from '../../lib/store/keys.js';
import { call, errorEnvelope, personalAccessToken, signedInUser, type SignedInUser } from '../support/api-client.js';
import { useStack } from '../support/local-stack.js';
import { tableWritesFromNow } from '../support/table-access-recorder.js';
import { wholeTableAsText } from '../support/table-scan.js';
import {
  approvedRedirect,
  asSession,
  authorizationCode,
  authorizePath,
  basicAuthorization,
  decide,
  formBody,
  issuedTokens,
  registerApp,
  startAuthorization,
  tokenRequest,
  type RegisteredApp,
} from '../support/oauth-flow.js';

const REDIRECT_URI = 'http://127.0.0.1:8765/callback';
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';

const stack = useStack();
let owner: SignedInUser;
let stranger: SignedInUser;
let app: RegisteredApp;
/** Every secret handed out in this file, for the final plaintext scan. */
const issuedSecrets: string[] = [];

const newApp = async (body: Record<string, unknown> = {}): Promise<RegisteredApp> => {
  const registered = await registerApp(stack.baseUrl, owner, { name: 'Dashboard', redirect_uris: [REDIRECT_URI], ...body });
  issuedSecrets.push(registered.client_secret);
  return registered;
};

const tokensOf = async (forApp: RegisteredApp, scope?: string) => {
  const tokens = await issuedTokens(stack.baseUrl, stranger, forApp, scope);
  issuedSecrets.push(tokens.access_token, tokens.refresh_token);
  return tokens;
};

const codeOf = async (forApp: RegisteredApp, extra: Record<string, string> = {}) => {
  const code = await authorizationCode(stack.baseUrl, stranger, forApp, extra);
  issuedSecrets.push(code);
  return code;
};

/** The app's secret rotated by its owner with `body`; the new secret is kept for the plaintext scan. */
const rotateSecret = async (rotating: RegisteredApp, body?: Record<string, unknown>) => {
  const response = await call(stack.baseUrl, 'POST', `/api/v1/oauth/apps/${rotating.id}/secret`, { ...asSession(owner), body });
  if (response.status === 200) issuedSecrets.push(response.body.data.client_secret);
  return response;
};

/** A refresh with the app's secret before the rotation is refused 401; with `newSecret` it is answered. */
const expectOnlyNewSecretRefreshes = async (rotating: RegisteredApp, newSecret: string, refreshToken: string) => {
  const withOld = await tokenRequest(stack.baseUrl, rotating, { grant_type: 'refresh_token', refresh_token: refreshToken });
  expect(withOld).toMatchObject({ status: 401, body: errorEnvelope('UNAUTHORIZED') });
  const withNew = await tokenRequest(
    stack.baseUrl,
    { ...rotating, client_secret: newSecret },
    { grant_type: 'refresh_token', refresh_token: refreshToken },
  );
  expect(withNew.status).toBe(200);
  issuedSecrets.push(withNew.body.access_token, withNew.body.refresh_token);
};

/** A refresh at the token endpoint as a form body with the app's credentials in it (client_secret_post). */
const refreshWithBodyCredentials = (refreshToken: string) =>
  call(stack.baseUrl, 'POST', '/api/v1/oauth/token', {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    rawBody: formBody({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: app.client_id,
      client_secret: app.client_secret,
    }),
  });

const exchangeBody = (forApp: RegisteredApp, code: string) => ({
  grant_type: 'authorization_code',
  code,
  redirect_uri: forApp.redirect_uris[0]!,
});

beforeAll(async () => {
  owner = await signedInUser(stack.baseUrl);
  stranger = await signedInUser(stack.baseUrl);
  issuedSecrets.push(owner.sessionToken, stranger.sessionToken);
  app = await newApp({ description: 'Shows your containers' });
});

/** Starts a code authorization of `app` at REDIRECT_URI with `state`; answers the consent request's id. */
const authorizeApp = (state: string) =>
  startAuthorization(stack.baseUrl, { response_type: 'code', client_id: app.client_id, redirect_uri: REDIRECT_URI, state });

describe('POST /api/v1/oauth/apps', () => {
  it('registers an application and shows its secret once', async () => {
    const response = await call(stack.baseUrl, 'POST', '/api/v1/oauth/apps', {
      ...asSession(owner),
      body: { name: 'CI bot', description: 'Deploys', redirect_uris: ['https://ci.example.com/cb', REDIRECT_URI] },
    });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      client_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      client_secret: expect.stringMatching(/^svcs_[\w-]{43}$/),
      name: 'CI bot',
      description: 'Deploys',
      redirect_uris: ['https://ci.example.com/cb', REDIRECT_URI],
      token_endpoint_auth_method: 'client_secret_basic',
      created_at: expect.any(String),
    });
    expect(response.body.data.client_id).not.toBe(response.body.data.id);
    issuedSecrets.push(response.body.data.client_secret);
    const fetched = await call(stack.baseUrl, 'GET', `/api/v1/oauth/apps/${response.body.data.id}`, { token: owner.sessionToken });
    expect(fetched.body.data).not.toHaveProperty('client_secret');
  });

  it('accepts a personal access token', async () => {
    const pat = await personalAccessToken(stack.baseUrl, owner);
    issuedSecrets.push(pat);
    const response = await call(stack.baseUrl, 'POST', '/api/v1/oauth/apps', {
      token: pat,
      body: { name: 'X', redirect_uris: [REDIRECT_URI] },
    });
    expect(response.status).toBe(200);
    issuedSecrets.push(response.body.data.client_secret);
  });

  it('answers 401 without credentials, 403 CSRF_REJECTED to a session without the CSRF token', async () => {
    const body = { name: 'X', redirect_uris: [REDIRECT_URI] };
    expect(await call(stack.baseUrl, 'POST', '/api/v1/oauth/apps', { body })).toMatchObject({
      status: 401,
      body: errorEnvelope('UNAUTHORIZED'),
    });
    expect(await call(stack.baseUrl, 'POST', '/api/v1/oauth/apps', { token: owner.sessionToken, body })).toMatchObject({
      status: 403,
      body: errorEnvelope('CSRF_REJECTED'),
    });
  });

  it.each([
    ['a missing name', { redirect_uris: [REDIRECT_URI] }],
    ['an empty name', { name: '  ', redirect_uris: [REDIRECT_URI] }],
    ['a name over 100 characters', { name: 'n'.repeat(101), redirect_uris: [REDIRECT_URI] }],
    ['a description over 1000 characters', { name: 'X', description: 'd'.repeat(1001), redirect_uris: [REDIRECT_URI] }],
    ['no redirect URIs', { name: 'X', redirect_uris: [] }],
    ['eleven redirect URIs', { name: 'X', redirect_uris: Array.from({ length: 11 }, (_, i) => `https://a.example.com/${i}`) }],
    ['a relative redirect URI', { name: 'X', redirect_uris: ['/callback'] }],
    ['a redirect URI with a fragment', { name: 'X', redirect_uris: ['https://a.example.com/cb#x'] }],
    ['an http redirect URI off loopback', { name: 'X', redirect_uris: ['http://a.example.com/cb'] }],
    ['a redirect URI listed twice', { name: 'X', redirect_uris: [REDIRECT_URI, REDIRECT_URI] }],
    ['an unknown field', { name: 'X', redirect_uris: [REDIRECT_URI], logo: 'x.png' }],
    ['redirect_uris as a string', { name: 'X', redirect_uris: REDIRECT_URI }],
  ])('answers 400 BAD_REQUEST for %s', async (_case, body) => {
    const response = await call(stack.baseUrl, 'POST', '/api/v1/oauth/apps', { ...asSession(owner), body });
    expect(response).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });
  });
});

describe('GET /api/v1/oauth/apps', () => {
  it("lists only the caller's applications, newest first, with a next link", async () => {
    const lister = await signedInUser(stack.baseUrl);
    const first = await registerApp(stack.baseUrl, lister, { name: 'First', redirect_uris: [REDIRECT_URI] });
    const second = await registerApp(stack.baseUrl, lister, { name: 'Second', redirect_uris: [REDIRECT_URI] });
    issuedSecrets.push(first.client_secret, second.client_secret, lister.sessionToken);

    const page1 = await call(stack.baseUrl, 'GET', '/api/v1/oauth/apps?limit=1', { token: lister.sessionToken });
    expect(page1.status).toBe(200);
    expect(page1.body.data).toEqual([
      {
        id: second.id,
        client_id: second.client_id,
        name: 'Second',
        description: '',
        redirect_uris: [REDIRECT_URI],
        created_at: second.created_at,
        updated_at: second.created_at,
        previous_secret_expires_at: null,
        token_endpoint_auth_method: 'client_secret_basic',
        refresh_reuse_grace_seconds: null,
      },
    ]);
    const next = /<([^>]+)>; rel="next"/.exec(page1.headers.get('link')!)![1]!;
    expect(next.startsWith(`${stack.baseUrl}/api/v1/oauth/apps?`)).toBe(true);
    const page2 = await call(stack.baseUrl, 'GET', next.slice(stack.baseUrl.length), { token: lister.sessionToken });
    expect(page2.body.data.map((listed: { id: string }) => listed.id)).toEqual([first.id]);
  });
});

describe('application management by id', () => {
  it('gets, updates any subset of fields, and leaves the rest alone', async () => {
    const managed = await newApp({ name: 'Old', description: 'Old description' });
    const got = await call(stack.baseUrl, 'GET', `/api/v1/oauth/apps/${managed.id}`, { token: owner.sessionToken });
    expect(got.body.data).toMatchObject({ id: managed.id, name: 'Old', updated_at: managed.created_at });

    const renamed = await call(stack.baseUrl, 'PATCH', `/api/v1/oauth/apps/${managed.id}`, { ...asSession(owner), body: { name: 'New' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({ name: 'New', description: 'Old description', redirect_uris: [REDIRECT_URI] });
    expect(Date.parse(renamed.body.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(managed.created_at));

    const moved = await call(stack.baseUrl, 'PATCH', `/api/v1/oauth/apps/${managed.id}`, {
      ...asSession(owner),
      body: { description: '', redirect_uris: ['https://new.example.com/cb'] },
    });
    expect(moved.body.data).toMatchObject({ name: 'New', description: '', redirect_uris: ['https://new.example.com/cb'] });
  });

  it.each([
    ['an empty body', {}],
    ['an unknown field', { owner: 'me' }],
    ['an invalid redirect URI', { redirect_uris: ['ftp://a.example.com'] }],
    ['an empty name', { name: '' }],
  ])('answers PATCH with %s 400 BAD_REQUEST', async (_case, body) => {
    const response = await call(stack.baseUrl, 'PATCH', `/api/v1/oauth/apps/${app.id}`, { ...asSession(owner), body });
    expect(response).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });
  });

  it.each([
    ['GET', ''],
    ['PATCH', ''],
    ['DELETE', ''],
    ['POST', '/secret'],
  ])("answers %s%s on another user's application 404 NOT_FOUND and changes nothing", async (method, suffix) => {
    const response = await call(stack.baseUrl, method, `/api/v1/oauth/apps/${app.id}${suffix}`, {
      ...asSession(stranger),
      ...(method === 'PATCH' ? { body: { name: 'Mine now' } } : {}),
    });
    expect(response).toMatchObject({ status: 404, body: errorEnvelope('NOT_FOUND') });
    const unchanged = await call(stack.baseUrl, 'GET', `/api/v1/oauth/apps/${app.id}`, { token: owner.sessionToken });
    expect(unchanged.body.data.name).toBe('Dashboard');
  });

  it('answers 404 for an id that is not a UUID and for an unknown one', async () => {
    expect((await call(stack.baseUrl, 'GET', '/api/v1/oauth/apps/nope', { token: owner.sessionToken })).status).toBe(404);
    expect((await call(stack.baseUrl, 'GET', `/api/v1/oauth/apps/${randomUUID()}`, { token: owner.sessionToken })).status).toBe(404);
  });

  it('needs the CSRF token for PATCH, DELETE and secret rotation with a session', async () => {
    for (const [method, suffix] of [
      ['PATCH', ''],
      ['DELETE', ''],
      ['POST', '/secret'],
    ] as const) {
      const response = await call(stack.baseUrl, method, `/api/v1/oauth/apps/${app.id}${suffix}`, {
        token: owner.sessionToken,
        ...(method === 'PATCH' ? { body: { name: 'X' } } : {}),
      });
      expect(response).toMatchObject({ status: 403, body: errorEnvelope('CSRF_REJECTED') });
    }
  });

  it('rotates the secret without a TTL by replacing it at once: the old secret fails at the token endpoint right away', async () => {
    const rotating = await newApp();
    const tokens = await tokensOf(rotating);

    const response = await rotateSecret(rotating);

    expect(response.status).toBe(200);
    expect(response.body.data.previous_secret_expires_at).toBeNull();
    await expectOnlyNewSecretRefreshes(rotating, response.body.data.client_secret, tokens.refresh_token);
  });

  it('rotates the secret: the new one is shown once, and the old one keeps working for the overlap asked for (a day)', async () => {
    const rotating = await newApp();
    const tokens = await tokensOf(rotating);
    const before = Date.now();

    const response = await rotateSecret(rotating, { previous_secret_ttl_seconds: 86_400 });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({
      id: rotating.id,
      client_id: rotating.client_id,
      client_secret: expect.stringMatching(/^svcs_[\w-]{43}$/),
      name: 'Dashboard',
      description: '',
      redirect_uris: [REDIRECT_URI],
      created_at: rotating.created_at,
      updated_at: expect.any(String),
      previous_secret_expires_at: expect.any(String),
      token_endpoint_auth_method: 'client_secret_basic',
      refresh_reuse_grace_seconds: null,
    });
    const overlapEnds = Date.parse(response.body.data.previous_secret_expires_at);
    expect(overlapEnds - before).toBeGreaterThanOrEqual(86_400_000 - 1000);
    expect(overlapEnds - Date.now()).toBeLessThanOrEqual(86_400_000);
    const newSecret = response.body.data.client_secret as string;
    const fetched = await call(stack.baseUrl, 'GET', `/api/v1/oauth/apps/${rotating.id}`, { token: owner.sessionToken });
    expect(fetched.body.data.previous_secret_expires_at).toBe(response.body.data.previous_secret_expires_at);

    // Both secrets work at the token endpoint (body and Basic) and at the revocation endpoint.
    const withOld = await tokenRequest(stack.baseUrl, rotating, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    expect(withOld.status).toBe(200);
    const withNew = await call(stack.baseUrl, 'POST', '/api/v1/oauth/token', {
      headers: { authorization: basicAuthorization(rotating.client_id, newSecret), 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: formBody({ grant_type: 'refresh_token', refresh_token: withOld.body.refresh_token }),
    });
    expect(withNew.status).toBe(200);
    issuedSecrets.push(withOld.body.access_token, withOld.body.refresh_token, withNew.body.access_token, withNew.body.refresh_token);
    const revoked = await call(stack.baseUrl, 'POST', '/api/v1/oauth/token/revoke', {
      body: { token: withNew.body.access_token, client_id: rotating.client_id, client_secret: rotating.client_secret },
    });
    expect(revoked).toMatchObject({ status: 200, body: { data: 'revoked' } });
    expect((await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: withNew.body.access_token })).status).toBe(401);
  });

  it('ends the overlap on DELETE /previous-secret: the previous secret stops at once, the current one works', async () => {
    const rotating = await newApp();
    const tokens = await tokensOf(rotating);
    const rotated = await rotateSecret(rotating, { previous_secret_ttl_seconds: 604_800 });

    const ended = await call(stack.baseUrl, 'DELETE', `/api/v1/oauth/apps/${rotating.id}/previous-secret`, asSession(owner));

    expect(ended.status).toBe(200);
    expect(ended.body.data).toMatchObject({ id: rotating.id, previous_secret_expires_at: null });
    expect(ended.body.data).not.toHaveProperty('client_secret');
    await expectOnlyNewSecretRefreshes(rotating, rotated.body.data.client_secret, tokens.refresh_token);
    const strangers = await call(stack.baseUrl, 'DELETE', `/api/v1/oauth/apps/${rotating.id}/previous-secret`, asSession(stranger));
    expect(strangers).toMatchObject({ status: 404, body: errorEnvelope('NOT_FOUND') });
  });

  it('stops the old secret at once with previous_secret_ttl_seconds 0', async () => {
    const rotating = await newApp();
    const tokens = await tokensOf(rotating);

    const response = await rotateSecret(rotating, { previous_secret_ttl_seconds: 0 });

    expect(response.body.data.previous_secret_expires_at).toBeNull();
    const withOld = await tokenRequest(stack.baseUrl, rotating, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    expect(withOld).toMatchObject({ status: 401, body: errorEnvelope('UNAUTHORIZED') });
  });

  it.each([
    ['a negative TTL', { previous_secret_ttl_seconds: -1 }],
    ['a TTL over a week', { previous_secret_ttl_seconds: 604_801 }],
    ['a fractional TTL', { previous_secret_ttl_seconds: 1.5 }],
    ['a TTL as a string', { previous_secret_ttl_seconds: '60' }],
    ['an unknown field', { ttl: 60 }],
  ])('answers a secret rotation with %s 400 BAD_REQUEST and keeps the secret', async (_case, body) => {
    const rotating = await newApp();
    const response = await rotateSecret(rotating, body);
    expect(response).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });
    const fetched = await call(stack.baseUrl, 'GET', `/api/v1/oauth/apps/${rotating.id}`, { token: owner.sessionToken });
    expect(fetched.body.data).toMatchObject({ updated_at: rotating.created_at, previous_secret_expires_at: null });
  });

  it('deletes an application: its code, access and refresh tokens stop working before the answer', async () => {
    const doomed = await newApp();
    const tokens = await tokensOf(doomed);
    const code = await codeOf(doomed);

    const response = await call(stack.baseUrl, 'DELETE', `/api/v1/oauth/apps/${doomed.id}`, asSession(owner));
    expect(response).toMatchObject({ status: 200, body: { data: 'deleted' } });

    expect((await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: tokens.access_token })).status).toBe(401);
    const refreshed = await tokenRequest(stack.baseUrl, doomed, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    expect(refreshed).toMatchObject({ status: 401, body: errorEnvelope('UNAUTHORIZED') });
    const exchanged = await tokenRequest(stack.baseUrl, doomed, exchangeBody(doomed, code));
    expect(exchanged).toMatchObject({ status: 401, body: errorEnvelope('UNAUTHORIZED') });
    expect((await call(stack.baseUrl, 'GET', `/api/v1/oauth/apps/${doomed.id}`, { token: owner.sessionToken })).status).toBe(404);
    expect((await call(stack.baseUrl, 'DELETE', `/api/v1/oauth/apps/${doomed.id}`, asSession(owner))).status).toBe(404);
    const authorize = await call(
      stack.baseUrl,
      'GET',
      authorizePath({ response_type: 'code', client_id: doomed.client_id, redirect_uri: REDIRECT_URI, state: 's' }),
    );
    expect(authorize).toMatchObject({ status: 404, body: errorEnvelope('NOT_FOUND') });
  });
});

describe('GET /api/v1/oauth/authorize', () => {
  const valid = () => ({ response_type: 'code', client_id: app.client_id, redirect_uri: REDIRECT_URI, state: 'abc' });

  it('stores the request, and only it, and redirects to the consent page', async () => {
    const writesBy = tableWritesFromNow();
    const response = await call(stack.baseUrl, 'GET', authorizePath(valid()));
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toMatch(/^\/oauth\/consent\?request=[\w-]{43}$/);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const requestId = new URL(response.headers.get('location')!, stack.baseUrl).searchParams.get('request')!;
    expect(writesBy('authorize')).toEqual([`dynamodb:PutItem ${keys.authorizationRequest(requestId).pk}`]);
  });

  it.each([
    ['no response_type', { response_type: undefined }],
    ['response_type token', { response_type: 'token' }],
    ['no client_id', { client_id: undefined }],
    ['a client_id that is not a UUID', { client_id: 'dashboard' }],
    ['no redirect_uri', { redirect_uri: undefined }],
    ['no state', { state: undefined }],
    ['an unknown scope', { scope: 'containers:admin' }],
    ['code_challenge_method plain', { code_challenge: s256CodeChallenge(VERIFIER), code_challenge_method: 'plain' }],
    ['a code_challenge without a method', { code_challenge: s256CodeChallenge(VERIFIER) }],
    ['a malformed code_challenge', { code_challenge: 'abc', code_challenge_method: 'S256' }],
    ['an unregistered redirect_uri', { redirect_uri: 'http://127.0.0.1:8765/other' }],
    ['a redirect_uri that differs only by a trailing slash', { redirect_uri: `${REDIRECT_URI}/` }],
    ['an unknown client_id and a bad response_type (input before resource)', { client_id: randomUUID(), response_type: 'token' }],
  ])('answers %s 400 BAD_REQUEST directly, without redirecting', async (_case, override) => {
    const parameters = Object.fromEntries(
      Object.entries({ ...valid(), ...override }).filter((entry): entry is [string, string] => entry[1] !== undefined),
    );
    const writesBy = tableWritesFromNow();
    const response = await call(stack.baseUrl, 'GET', authorizePath(parameters));
    expect(response).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });
    expect(response.headers.get('location')).toBeNull();
    // Issue 7 item 9: an invalid request never writes. Its own writes, not the table's size,
    // which a background loop may change meanwhile (issue 32 item 11).
    expect(writesBy('authorize')).toEqual([]);
  });

  it('answers an unknown client_id 404 NOT_FOUND', async () => {
    const writesBy = tableWritesFromNow();
    const response = await call(stack.baseUrl, 'GET', authorizePath({ ...valid(), client_id: randomUUID() }));
    expect(response).toMatchObject({ status: 404, body: errorEnvelope('NOT_FOUND') });
    expect(writesBy('authorize')).toEqual([]);
  });
});

describe('the consent page', () => {
  it('sends a browser without a session to the login page and back', async () => {
    const requestId = await authorizeApp('s');
    const response = await call(stack.baseUrl, 'GET', `/oauth/consent?request=${requestId}`);
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get('location')!, stack.baseUrl);
    expect(location.pathname).toBe('/login');
    expect(location.searchParams.get('next')).toBe(`/oauth/consent?request=${requestId}`);
  });

  it('shows the application, the redirect host, the scopes and the user, escaped, with the page security headers', async () => {
    const shady = await newApp({ name: '<script>alert(1)</script>', description: 'Reads "things" & <b>more</b>' });
    const requestId = await startAuthorization(stack.baseUrl, {
      response_type: 'code',
      client_id: shady.client_id,
      redirect_uri: REDIRECT_URI,
      state: 's',
      scope: 'containers:read',
    });
    const response = await call(stack.baseUrl, 'GET', `/oauth/consent?request=${requestId}`, { headers: { cookie: stranger.cookie } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(response.text).not.toContain('<script>');
    expect(response.text).toContain('Reads &quot;things&quot; &amp; &lt;b&gt;more&lt;/b&gt;');
    expect(response.text).toContain('127.0.0.1:8765');
    expect(response.text).toContain('containers:read');
    expect(response.text).not.toContain('containers:write');
    expect(response.text).toContain(stranger.email);
    expect(response.text).toContain(`name="csrf_token" value="${stranger.csrfToken}"`);
  });

  it('answers an unknown request with an error page', async () => {
    const response = await call(stack.baseUrl, 'GET', `/oauth/consent?request=${'x'.repeat(43)}`, { headers: { cookie: stranger.cookie } });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('answers an HTML error page, not JSON, when the user record is gone but the session still works', async () => {
    const orphan = await signedInUser(stack.baseUrl);
    issuedSecrets.push(orphan.sessionToken);
    const requestId = await authorizeApp('s');
    await documentClient.send(new DeleteCommand({ TableName: tableName, Key: keys.user(orphan.userId) }));

    const response = await call(stack.baseUrl, 'GET', `/oauth/consent?request=${requestId}`, { headers: { cookie: orphan.cookie } });

    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.text).toContain('Authorization failed');
  });

  it('approves once: a code and the state go to the redirect URI, and the request cannot be answered again', async () => {
    const requestId = await authorizeApp('st&te=1');
    const approved = await decide(stack.baseUrl, stranger, requestId, 'approve');
    // 303, never 302 or 307: the browser must not replay the form post at the client (RFC 9700 section 4.12).
    expect(approved.status).toBe(303);
    const location = new URL(approved.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
    expect(location.searchParams.get('code')).toMatch(/^[\w-]{43}$/);
    expect(location.searchParams.get('state')).toBe('st&te=1');
    // RFC 9207: the issuer the metadata names, so a client of several servers can tell who answered.
    expect(location.searchParams.get('iss')).toBe(stack.baseUrl);
    issuedSecrets.push(location.searchParams.get('code')!);

    const again = await decide(stack.baseUrl, stranger, requestId, 'approve');
    expect(again.status).toBe(400);
    const denied = await decide(stack.baseUrl, stranger, requestId, 'deny');
    expect(denied.status).toBe(400);
  });

  it('denies: access_denied, the state and the issuer go to the redirect URI', async () => {
    const requestId = await authorizeApp('deny-me');
    const response = await decide(stack.baseUrl, stranger, requestId, 'deny');
    expect(response.status).toBe(303);
    const location = new URL(response.headers.get('location')!);
    expect(Object.fromEntries(location.searchParams)).toEqual({ error: 'access_denied', state: 'deny-me', iss: stack.baseUrl });
  });

  it('refuses a decision without the CSRF token (403) or without a session (401)', async () => {
    const requestId = await authorizeApp('s');
    const withoutCsrf = await call(stack.baseUrl, 'POST', '/oauth/consent', {
      headers: { cookie: stranger.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: formBody({ request: requestId, decision: 'approve' }),
    });
    expect(withoutCsrf).toMatchObject({ status: 403, body: errorEnvelope('CSRF_REJECTED') });
    const wrongCsrf = await call(stack.baseUrl, 'POST', '/oauth/consent', {
      headers: { cookie: stranger.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: formBody({ csrf_token: owner.csrfToken, request: requestId, decision: 'approve' }),
    });
    expect(wrongCsrf).toMatchObject({ status: 403, body: errorEnvelope('CSRF_REJECTED') });
    const withoutSession = await call(stack.baseUrl, 'POST', '/oauth/consent', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: formBody({ csrf_token: stranger.csrfToken, request: requestId, decision: 'approve' }),
    });
    expect(withoutSession).toMatchObject({ status: 401, body: errorEnvelope('UNAUTHORIZED') });
    expect((await decide(stack.baseUrl, stranger, requestId, 'approve')).status).toBe(303);
  });
});

describe('POST /api/v1/oauth/token', () => {
  it('exchanges a code (JSON body) for the bare token response, not cached', async () => {
    const code = await codeOf(app);
    const response = await tokenRequest(stack.baseUrl, app, exchangeBody(app, code));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      access_token: expect.stringMatching(/^svat_[\w-]{43}\.[0-9a-f-]{36}$/),
      token_type: 'Bearer',
      expires_in: 900,
      refresh_token: expect.stringMatching(/^svrt_[\w-]{43}\.[0-9a-f-]{36}$/),
      scope: 'containers:read containers:write',
    });
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('pragma')).toBe('no-cache');
    issuedSecrets.push(response.body.access_token, response.body.refresh_token);
  });

  it('exchanges a code sent form-encoded with HTTP Basic client authentication', async () => {
    const code = await codeOf(app, { scope: 'containers:read' });
    const response = await call(stack.baseUrl, 'POST', '/api/v1/oauth/token', {
      headers: { authorization: basicAuthorization(app.client_id, app.client_secret), 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: formBody(exchangeBody(app, code)),
    });
    expect(response.status).toBe(200);
    expect(response.body.scope).toBe('containers:read');
    issuedSecrets.push(response.body.access_token, response.body.refresh_token);
  });

  it('rotates a refresh token (form body, body credentials) and answers the same token response', async () => {
    const tokens = await tokensOf(app);
    const response = await refreshWithBodyCredentials(tokens.refresh_token);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ token_type: 'Bearer', expires_in: 900, scope: 'containers:read containers:write' });
    expect(response.body.refresh_token).not.toBe(tokens.refresh_token);
    expect(response.headers.get('cache-control')).toBe('no-store');
    issuedSecrets.push(response.body.access_token, response.body.refresh_token);
  });

  it('answers 400 BAD_REQUEST when Basic and body credentials come together', async () => {
    const code = await codeOf(app);
    const response = await call(stack.baseUrl, 'POST', '/api/v1/oauth/token', {
      headers: { authorization: basicAuthorization(app.client_id, app.client_secret) },
      body: { ...exchangeBody(app, code), client_id: app.client_id, client_secret: app.client_secret },
    });
    expect(response).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });
  });

  it.each([
    ['a wrong secret', (a: RegisteredApp) => ({ client_id: a.client_id, client_secret: `${a.client_secret}x` })],
    ['an unknown client_id', (a: RegisteredApp) => ({ client_id: randomUUID(), client_secret: a.client_secret })],
    ['a client_id that is not a UUID', (a: RegisteredApp) => ({ client_id: 'dashboard', client_secret: a.client_secret })],
    ['no client credentials', () => ({})],
    [
      'a bad secret and a bad grant_type (credentials first)',
      (a: RegisteredApp) => ({ client_id: a.client_id, client_secret: 'x', grant_type: 'password' }),
    ],
  ])('answers %s 401 UNAUTHORIZED', async (_case, credentials) => {
    const code = await codeOf(app);
    const response = await call(stack.baseUrl, 'POST', '/api/v1/oauth/token', {
      body: { ...exchangeBody(app, code), ...credentials(app) },
    });
    expect(response).toMatchObject({ status: 401, body: errorEnvelope('UNAUTHORIZED') });
    expect(response.text).not.toContain(app.client_secret);
  });

  it('answers a wrong Basic secret 401 with a Basic challenge', async () => {
    const response = await call(stack.baseUrl, 'POST', '/api/v1/oauth/token', {
      headers: { authorization: basicAuthorization(app.client_id, 'svcs_wrong') },
      body: { grant_type: 'refresh_token', refresh_token: 'svrt_x' },
    });
    expect(response).toMatchObject({ status: 401, body: errorEnvelope('UNAUTHORIZED') });
    expect(response.headers.get('www-authenticate')).toMatch(/^Basic /);
  });

  it.each([
    ['no grant_type', { grant_type: undefined }],
    ['an unsupported grant_type', { grant_type: 'client_credentials' }],
    ['no code', { code: undefined }],
    ['an unknown code', { code: 'x'.repeat(43) }],
    ['no redirect_uri', { redirect_uri: undefined }],
    ['a mismatched redirect_uri', { redirect_uri: 'http://127.0.0.1:8765/other' }],
    ['a code_verifier for a code without a challenge', { code_verifier: VERIFIER }],
    ['a number for the code', { code: 42 }],
  ])('answers %s 400 BAD_REQUEST', async (_case, override) => {
    const code = await codeOf(app);
    const body = Object.fromEntries(Object.entries({ ...exchangeBody(app, code), ...override }).filter(([, value]) => value !== undefined));
    const response = await tokenRequest(stack.baseUrl, app, body as Record<string, string>);
    expect(response).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });
  });

  it('answers a body that is not JSON 400 BAD_REQUEST', async () => {
    const response = await call(stack.baseUrl, 'POST', '/api/v1/oauth/token', {
      rawBody: 'grant_type=',
      headers: { 'content-type': 'application/json' },
    });
    expect(response).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });
  });

  it('answers a repeated form parameter 400 invalid_request (a form request gets RFC 6749 errors)', async () => {
    const response = await call(stack.baseUrl, 'POST', '/api/v1/oauth/token', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: 'grant_type=refresh_token&grant_type=authorization_code',
    });
    expect(response).toMatchObject({
      status: 400,
      body: { error: 'invalid_request', error_description: 'Parameter grant_type is repeated' },
    });
  });

  it('answers a code issued to another client 400, and the code still works for its own client', async () => {
    const other = await newApp();
    const code = await codeOf(app);
    const stolen = await tokenRequest(stack.baseUrl, other, exchangeBody(other, code));
    expect(stolen).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });
    const own = await tokenRequest(stack.baseUrl, app, exchangeBody(app, code));
    expect(own.status).toBe(200);
    issuedSecrets.push(own.body.access_token, own.body.refresh_token);
  });

  it('answers a code used twice 400 and revokes the tokens issued for it', async () => {
    const code = await codeOf(app);
    const first = await tokenRequest(stack.baseUrl, app, exchangeBody(app, code));
    issuedSecrets.push(first.body.access_token, first.body.refresh_token);
    expect((await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: first.body.access_token })).status).toBe(200);

    const second = await tokenRequest(stack.baseUrl, app, exchangeBody(app, code));
    expect(second).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });

    expect((await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: first.body.access_token })).status).toBe(401);
    const refreshed = await tokenRequest(stack.baseUrl, app, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token });
    expect(refreshed.status).toBe(400);
  });

  it('answers an expired code 400', async () => {
    const code = await codeOf(app);
    await documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.authorizationCode(sha256Hex(code)),
        UpdateExpression: 'SET expires_at = :past',
        ExpressionAttributeValues: { ':past': new Date(Date.now() - 1000).toISOString() },
      }),
    );
    const response = await tokenRequest(stack.baseUrl, app, exchangeBody(app, code));
    expect(response).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });
  });

  it('needs the PKCE verifier when the authorization request had a challenge', async () => {
    const code = await codeOf(app, { code_challenge: s256CodeChallenge(VERIFIER), code_challenge_method: 'S256' });
    const missing = await tokenRequest(stack.baseUrl, app, exchangeBody(app, code));
    expect(missing).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });
    const wrong = await tokenRequest(stack.baseUrl, app, { ...exchangeBody(app, code), code_verifier: 'w'.repeat(43) });
    expect(wrong).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });
    const right = await tokenRequest(stack.baseUrl, app, { ...exchangeBody(app, code), code_verifier: VERIFIER });
    expect(right.status).toBe(200);
    issuedSecrets.push(right.body.access_token, right.body.refresh_token);
  });

  it('answers an unknown refresh token 400, and a rotated one whose successor was used 400, revoking the grant', async () => {
    const unknown = await tokenRequest(stack.baseUrl, app, { grant_type: 'refresh_token', refresh_token: `svrt_${'x'.repeat(43)}` });
    expect(unknown).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });

    const tokens = await tokensOf(app);
    const rotated = await tokenRequest(stack.baseUrl, app, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    const next = await tokenRequest(stack.baseUrl, app, { grant_type: 'refresh_token', refresh_token: rotated.body.refresh_token });
    issuedSecrets.push(rotated.body.access_token, rotated.body.refresh_token, next.body.access_token, next.body.refresh_token);
    const replay = await tokenRequest(stack.baseUrl, app, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    expect(replay).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });

    expect((await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: next.body.access_token })).status).toBe(401);
    const descendant = await tokenRequest(stack.baseUrl, app, { grant_type: 'refresh_token', refresh_token: next.body.refresh_token });
    expect(descendant).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });
  });

  it('answers a used refresh token replayed at once 400 invalid_grant, and revokes the grant (no retry grace by default)', async () => {
    const tokens = await tokensOf(app);
    const rotated = await tokenRequest(stack.baseUrl, app, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    expect(rotated.status).toBe(200);
    issuedSecrets.push(rotated.body.access_token, rotated.body.refresh_token);

    const replay = await refreshWithBodyCredentials(tokens.refresh_token);

    expect(replay).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect((await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: rotated.body.access_token })).status).toBe(401);
    const successor = await tokenRequest(stack.baseUrl, app, { grant_type: 'refresh_token', refresh_token: rotated.body.refresh_token });
    expect(successor).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });
  });

  it("answers another client's refresh token 400", async () => {
    const other = await newApp();
    const tokens = await tokensOf(app);
    const response = await tokenRequest(stack.baseUrl, other, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    expect(response).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });
  });
});

describe('POST /api/v1/oauth/token/revoke', () => {
  it('revokes a refresh token and its whole grant, and is idempotent', async () => {
    const tokens = await tokensOf(app);
    const response = await call(stack.baseUrl, 'POST', '/api/v1/oauth/token/revoke', {
      body: { refresh_token: tokens.refresh_token, client_id: app.client_id, client_secret: app.client_secret },
    });
    expect(response).toMatchObject({ status: 200, body: { data: 'revoked' } });
    expect((await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: tokens.access_token })).status).toBe(401);
    const refreshed = await tokenRequest(stack.baseUrl, app, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    expect(refreshed.status).toBe(400);

    const again = await call(stack.baseUrl, 'POST', '/api/v1/oauth/token/revoke', {
      body: { refresh_token: tokens.refresh_token, client_id: app.client_id, client_secret: app.client_secret },
    });
    expect(again).toMatchObject({ status: 200, body: { data: 'revoked' } });
  });

  it("takes RFC 7009's form body with token and HTTP Basic", async () => {
    const tokens = await tokensOf(app);
    const response = await call(stack.baseUrl, 'POST', '/api/v1/oauth/token/revoke', {
      headers: { authorization: basicAuthorization(app.client_id, app.client_secret), 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: formBody({ token: tokens.refresh_token, token_type_hint: 'refresh_token' }),
    });
    expect(response).toMatchObject({ status: 200, body: { data: 'revoked' } });
    expect((await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: tokens.access_token })).status).toBe(401);
  });

  it('answers 200 for an unknown token', async () => {
    const response = await call(stack.baseUrl, 'POST', '/api/v1/oauth/token/revoke', {
      body: { refresh_token: `svrt_${'y'.repeat(43)}`, client_id: app.client_id, client_secret: app.client_secret },
    });
    expect(response).toMatchObject({ status: 200, body: { data: 'revoked' } });
  });

  it('answers bad client credentials 401', async () => {
    const tokens = await tokensOf(app);
    const response = await call(stack.baseUrl, 'POST', '/api/v1/oauth/token/revoke', {
      body: { refresh_token: tokens.refresh_token, client_id: app.client_id, client_secret: 'svcs_wrong' },
    });
    expect(response).toMatchObject({ status: 401, body: errorEnvelope('UNAUTHORIZED') });
    expect((await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: tokens.access_token })).status).toBe(200);
  });

  it("answers another client's token 400 and revokes nothing", async () => {
    const other = await newApp();
    const tokens = await tokensOf(app);
    const response = await call(stack.baseUrl, 'POST', '/api/v1/oauth/token/revoke', {
      body: { refresh_token: tokens.refresh_token, client_id: other.client_id, client_secret: other.client_secret },
    });
    expect(response).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });
    expect((await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: tokens.access_token })).status).toBe(200);
  });

  it('answers a missing token 400 and Basic plus a body secret 400', async () => {
    const missing = await call(stack.baseUrl, 'POST', '/api/v1/oauth/token/revoke', {
      body: { client_id: app.client_id, client_secret: app.client_secret },
    });
    expect(missing).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });
    const both = await call(stack.baseUrl, 'POST', '/api/v1/oauth/token/revoke', {
      headers: { authorization: basicAuthorization(app.client_id, app.client_secret) },
      body: { token: 'svrt_x', client_secret: app.client_secret },
    });
    expect(both).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });
  });
});

describe('OAuth access tokens on the API', () => {
  it('may read the user (200) but not personal access tokens (403 FORBIDDEN) or applications (403)', async () => {
    const tokens = await tokensOf(app);
    const me = await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: tokens.access_token });
    expect(me).toMatchObject({ status: 200, body: { data: { id: stranger.userId, email: stranger.email } } });
    expect(await call(stack.baseUrl, 'GET', '/api/v1/tokens', { token: tokens.access_token })).toMatchObject({
      status: 403,
      body: errorEnvelope('FORBIDDEN'),
    });
    expect(await call(stack.baseUrl, 'GET', '/api/v1/oauth/apps', { token: tokens.access_token })).toMatchObject({
      status: 403,
      body: errorEnvelope('FORBIDDEN'),
    });
  });

  it('stops working once expired (401)', async () => {
    const tokens = await tokensOf(app);
    await documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        // The grant holds its access tokens' hashes and expiries (docs/oauth.md, "Records").
        Key: keys.grant(grantIdOf(tokens.access_token)!),
        UpdateExpression: 'SET access_token.expires_at = :past',
        ExpressionAttributeValues: { ':past': new Date(Date.now() - 1000).toISOString() },
      }),
    );
    const response = await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: tokens.access_token });
    expect(response).toMatchObject({ status: 401, body: errorEnvelope('UNAUTHORIZED') });
  });

  const hasContainerRoutes =
    routes.some((route) => route.id === 'createContainer') && routes.some((route) => route.id === 'listContainers');

  it.skipIf(!hasContainerRoutes)('are held to their scope: a containers:read token gets 403 on a containers:write route', async () => {
    const tokens = await tokensOf(app, 'containers:read');
    const response = await call(stack.baseUrl, 'POST', '/api/v1/containers', { token: tokens.access_token, body: { hostname: 'scoped' } });
    expect(response).toMatchObject({ status: 403, body: errorEnvelope('FORBIDDEN') });
  });
});

describe('GET /.well-known/oauth-authorization-server', () => {
  it('describes the server as RFC 8414 asks', async () => {
    const response = await call(stack.baseUrl, 'GET', '/.well-known/oauth-authorization-server');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      issuer: stack.baseUrl,
      authorization_endpoint: `${stack.baseUrl}/api/v1/oauth/authorize`,
      token_endpoint: `${stack.baseUrl}/api/v1/oauth/token`,
      revocation_endpoint: `${stack.baseUrl}/api/v1/oauth/token/revoke`,
      device_authorization_endpoint: `${stack.baseUrl}/api/v1/oauth/device_authorization`,
      registration_endpoint: `${stack.baseUrl}/api/v1/oauth/register`,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      code_challenge_methods_supported: ['S256'],
      scopes_supported: ['containers:read', 'containers:write'],
      prompt_values_supported: ['consent'],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    });
  });
});

describe('the table after all of the above', () => {
  it('holds no client secret, code, refresh token or access token in plain text', async () => {
    const approved = await approvedRedirect(stack.baseUrl, stranger, app);
    issuedSecrets.push(approved.searchParams.get('code')!);
    const { text: everything } = await wholeTableAsText();

    expect(issuedSecrets.length).toBeGreaterThan(40);
    const leaked = issuedSecrets.filter((secret) => everything.includes(secret));
    expect(leaked).toEqual([]);
    expect(everything).toContain(sha256Hex(app.client_secret));
  });
});
