import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s256CodeChallenge } from '../../lib/oauth/pkce.js';
import { call, signedInUser, type SignedInUser } from '../support/api-client.js';
import { startTestStack, type TestStack } from '../support/local-stack.js';
import {
  asSession,
  authorizePath,
  decide,
  formBody,
  issuedTokens,
  type RegisteredApp,
  registerApp,
  startAuthorization,
  tokenRequest,
} from '../support/oauth-flow.js';

/**
 * What agents (native and CLI clients) need of the authorization server (docs/oauth.md, "Agents"):
 * loopback redirect URIs on any port for public clients (RFC 8252 section 7.3) and `iss` in every
 * authorization response (RFC 9207); and an application's own refresh retry grace.
 */

let stack: TestStack;
let baseUrl: string;
let owner: SignedInUser;
let person: SignedInUser;

beforeAll(async () => {
  stack = await startTestStack();
  baseUrl = stack.baseUrl;
  owner = await signedInUser(baseUrl);
  person = await signedInUser(baseUrl);
});

afterAll(async () => {
  await stack?.close();
});

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: s256CodeChallenge(verifier) };
};

/** A form-encoded token request as a public client sends it: its client_id and no secret. */
const publicTokenRequest = (fields: Record<string, string>) =>
  call(baseUrl, 'POST', '/api/v1/oauth/token', {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    rawBody: formBody(fields),
  });

describe('loopback redirect URIs (RFC 8252 section 7.3)', () => {
  it('lets a public client registered with http://127.0.0.1/callback come back on a new port through the code exchange, and keeps a confidential client exact', async () => {
    const app = await registerApp(baseUrl, owner, {
      name: 'Agent CLI',
      redirect_uris: ['http://127.0.0.1/callback'],
      token_endpoint_auth_method: 'none',
    });
    const { verifier, challenge } = pkce();
    const redirectUri = 'http://127.0.0.1:53682/callback';

    const requestId = await startAuthorization(baseUrl, {
      response_type: 'code',
      client_id: app.client_id,
      redirect_uri: redirectUri,
      state: 'loop',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const approved = await decide(baseUrl, person, requestId, 'approve');
    const location = new URL(approved.headers.get('location')!);
    const exchanged = await publicTokenRequest({
      grant_type: 'authorization_code',
      code: location.searchParams.get('code')!,
      redirect_uri: redirectUri,
      client_id: app.client_id,
      code_verifier: verifier,
    });

    expect(`${location.origin}${location.pathname}`).toBe(redirectUri);
    expect(exchanged.status).toBe(200);
    expect(exchanged.body.access_token).toMatch(/^svat_/);

    // A confidential client's URIs stay exact: another port of its https URI or of its loopback URI is 400.
    const confidential = await registerApp(baseUrl, owner, {
      name: 'Web dashboard',
      redirect_uris: ['https://dashboard.example.com/callback', 'http://127.0.0.1:8765/callback'],
    });
    const refusals = await Promise.all(
      ['https://dashboard.example.com:8443/callback', 'http://127.0.0.1:8766/callback'].map((uri) =>
        call(baseUrl, 'GET', authorizePath({ response_type: 'code', client_id: confidential.client_id, redirect_uri: uri, state: 's' })),
      ),
    );
    for (const refusal of refusals) {
      expect(refusal.status).toBe(400);
      expect(refusal.body.error).toMatchObject({ code: 'BAD_REQUEST', message: 'redirect_uri is not registered for this application' });
    }
  });

  it('matches [::1] on any port for a public client too', async () => {
    const app = await registerApp(baseUrl, owner, {
      name: 'Agent CLI v6',
      redirect_uris: ['http://[::1]/callback'],
      token_endpoint_auth_method: 'none',
    });

    const response = await call(
      baseUrl,
      'GET',
      authorizePath({
        response_type: 'code',
        client_id: app.client_id,
        redirect_uri: 'http://[::1]:61000/callback',
        state: 's',
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
      }),
    );

    expect(response.status).toBe(302);
  });
});

describe('iss in the authorization response (RFC 9207)', () => {
  it('names the issuer in the code redirect and in the access_denied redirect, as the metadata says it will', async () => {
    const app = await registerApp(baseUrl, owner, { name: 'Dashboard', redirect_uris: ['http://127.0.0.1:8765/callback'] });
    const start = () =>
      startAuthorization(baseUrl, { response_type: 'code', client_id: app.client_id, redirect_uri: app.redirect_uris[0]!, state: 's' });

    const approved = new URL((await decide(baseUrl, person, await start(), 'approve')).headers.get('location')!);
    const denied = new URL((await decide(baseUrl, person, await start(), 'deny')).headers.get('location')!);
    const metadata = await call(baseUrl, 'GET', '/.well-known/oauth-authorization-server');

    expect(metadata.body).toMatchObject({ issuer: baseUrl, authorization_response_iss_parameter_supported: true });
    expect(approved.searchParams.get('iss')).toBe(baseUrl);
    expect(approved.searchParams.get('code')).toBeTruthy();
    expect(Object.fromEntries(denied.searchParams)).toEqual({ error: 'access_denied', state: 's', iss: baseUrl });
  });
});

describe('an application\'s own refresh retry grace (docs/oauth.md, "Refresh retries")', () => {
  it('lets its owner opt one application into a 30 s grace while the service default (0) still revokes on reuse for others', async () => {
    const graceful = await registerApp(baseUrl, owner, { name: 'Agent with retries', redirect_uris: ['http://127.0.0.1:8765/callback'] });
    const strict = await registerApp(baseUrl, owner, { name: 'Agent without', redirect_uris: ['http://127.0.0.1:8765/callback'] });
    const patched = await call(baseUrl, 'PATCH', `/api/v1/oauth/apps/${graceful.id}`, {
      ...asSession(owner),
      body: { refresh_reuse_grace_seconds: 30 },
    });
    const refreshTwice = async (app: RegisteredApp) => {
      const tokens = await issuedTokens(baseUrl, person, app);
      const refresh = () => tokenRequest(baseUrl, app, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
      return [await refresh(), await refresh()] as const;
    };

    const [gracefulFirst, gracefulRetry] = await refreshTwice(graceful);
    const [strictFirst, strictRetry] = await refreshTwice(strict);

    expect(patched.status).toBe(200);
    expect(patched.body.data.refresh_reuse_grace_seconds).toBe(30);
    expect(gracefulRetry.status).toBe(200);
    expect(gracefulRetry.body.refresh_token).toBe(gracefulFirst.body.refresh_token);
    expect((await call(baseUrl, 'GET', '/api/v1/users/me', { token: gracefulFirst.body.access_token })).status).toBe(200);
    expect(strictRetry.status).toBe(400);
    expect((await call(baseUrl, 'GET', '/api/v1/users/me', { token: strictFirst.body.access_token })).status).toBe(401);
  });

  it('refuses a grace over 60 s and shows null (the operator setting) until one is chosen', async () => {
    const app = await registerApp(baseUrl, owner, { name: 'Agent', redirect_uris: ['http://127.0.0.1:8765/callback'] });

    const tooLong = await call(baseUrl, 'PATCH', `/api/v1/oauth/apps/${app.id}`, {
      ...asSession(owner),
      body: { refresh_reuse_grace_seconds: 61 },
    });
    const record = await call(baseUrl, 'GET', `/api/v1/oauth/apps/${app.id}`, asSession(owner));

    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.details).toEqual([expect.objectContaining({ field: 'refresh_reuse_grace_seconds' })]);
    expect(record.body.data.refresh_reuse_grace_seconds).toBeNull();
  });
});
