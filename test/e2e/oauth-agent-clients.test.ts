import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { s256CodeChallenge } from '../../lib/oauth/pkce.js';
import { call, signedInUser, type SignedInUser } from '../support/api-client.js';
import { useStack } from '../support/local-stack.js';
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

const stack = useStack();
let owner: SignedInUser;
let person: SignedInUser;

beforeAll(async () => {
  owner = await signedInUser(stack.baseUrl);
  person = await signedInUser(stack.baseUrl);
});

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: s256CodeChallenge(verifier) };
};

/** A form-encoded token request as a public client sends it: its client_id and no secret. */
const publicTokenRequest = (fields: Record<string, string>) =>
  call(stack.baseUrl, 'POST', '/api/v1/oauth/token', {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    rawBody: formBody(fields),
  });

describe('loopback redirect URIs (RFC 8252 section 7.3)', () => {
  it('lets a public client registered with http://127.0.0.1/callback come back on a new port through the code exchange, and keeps a confidential client exact', async () => {
    const app = await registerApp(stack.baseUrl, owner, {
      name: 'Agent CLI',
      redirect_uris: ['http://127.0.0.1/callback'],
      token_endpoint_auth_method: 'none',
    });
    const { verifier, challenge } = pkce();
    const redirectUri = 'http://127.0.0.1:53682/callback';

    const requestId = await startAuthorization(stack.baseUrl, {
      response_type: 'code',
      client_id: app.client_id,
      redirect_uri: redirectUri,
      state: 'loop',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const approved = await decide(stack.baseUrl, person, requestId, 'approve');
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
    const confidential = await registerApp(stack.baseUrl, owner, {
      name: 'Web dashboard',
      redirect_uris: ['https://dashboard.example.com/callback', 'http://127.0.0.1:8765/callback'],
    });
    const refusals = await Promise.all(
      ['https://dashboard.example.com:8443/callback', 'http://127.0.0.1:8766/callback'].map((uri) =>
        call(
          stack.baseUrl,
          'GET',
          authorizePath({ response_type: 'code', client_id: confidential.client_id, redirect_uri: uri, state: 's' }),
        ),
      ),
    );
    for (const refusal of refusals) {
      expect(refusal.status).toBe(400);
      expect(refusal.body.error).toMatchObject({ code: 'BAD_REQUEST', message: 'redirect_uri is not registered for this application' });
    }
  });

  it('matches [::1] on any port for a public client too', async () => {
    const app = await registerApp(stack.baseUrl, owner, {
      name: 'Agent CLI v6',
      redirect_uris: ['http://[::1]/callback'],
      token_endpoint_auth_method: 'none',
    });

    const response = await call(
      stack.baseUrl,
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
    const app = await registerApp(stack.baseUrl, owner, { name: 'Dashboard', redirect_uris: ['http://127.0.0.1:8765/callback'] });
    const start = () =>
      startAuthorization(stack.baseUrl, {
        response_type: 'code',
        client_id: app.client_id,
        redirect_uri: app.redirect_uris[0]!,
        state: 's',
      });

    const approved = new URL((await decide(stack.baseUrl, person, await start(), 'approve')).headers.get('location')!);
    const denied = new URL((await decide(stack.baseUrl, person, await start(), 'deny')).headers.get('location')!);
    const metadata = await call(stack.baseUrl, 'GET', '/.well-known/oauth-authorization-server');

    expect(metadata.body).toMatchObject({ issuer: stack.baseUrl, authorization_response_iss_parameter_supported: true });
    expect(approved.searchParams.get('iss')).toBe(stack.baseUrl);
    expect(approved.searchParams.get('code')).toBeTruthy();
    expect(Object.fromEntries(denied.searchParams)).toEqual({ error: 'access_denied', state: 's', iss: stack.baseUrl });
  });
});

describe('an application\'s own refresh retry grace (docs/oauth.md, "Refresh retries")', () => {
  it('lets its owner opt one application into a 30 s grace while the service default (0) still revokes on reuse for others', async () => {
    const graceful = await registerApp(stack.baseUrl, owner, {
      name: 'Agent with retries',
      redirect_uris: ['http://127.0.0.1:8765/callback'],
    });
    const strict = await registerApp(stack.baseUrl, owner, { name: 'Agent without', redirect_uris: ['http://127.0.0.1:8765/callback'] });
    const patched = await call(stack.baseUrl, 'PATCH', `/api/v1/oauth/apps/${graceful.id}`, {
      ...asSession(owner),
      body: { refresh_reuse_grace_seconds: 30 },
    });
    const refreshTwice = async (app: RegisteredApp) => {
      const tokens = await issuedTokens(stack.baseUrl, person, app);
      const refresh = () => tokenRequest(stack.baseUrl, app, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
      return [await refresh(), await refresh()] as const;
    };

    const [gracefulFirst, gracefulRetry] = await refreshTwice(graceful);
    const [strictFirst, strictRetry] = await refreshTwice(strict);

    expect(patched.status).toBe(200);
    expect(patched.body.data.refresh_reuse_grace_seconds).toBe(30);
    expect(gracefulRetry.status).toBe(200);
    expect(gracefulRetry.body.refresh_token).toBe(gracefulFirst.body.refresh_token);
    expect((await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: gracefulFirst.body.access_token })).status).toBe(200);
    expect(strictRetry.status).toBe(400);
    expect((await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: strictFirst.body.access_token })).status).toBe(401);
  });

  it('refuses a grace over 60 s and shows null (the operator setting) until one is chosen', async () => {
    const app = await registerApp(stack.baseUrl, owner, { name: 'Agent', redirect_uris: ['http://127.0.0.1:8765/callback'] });

    const tooLong = await call(stack.baseUrl, 'PATCH', `/api/v1/oauth/apps/${app.id}`, {
      ...asSession(owner),
      body: { refresh_reuse_grace_seconds: 61 },
    });
    const record = await call(stack.baseUrl, 'GET', `/api/v1/oauth/apps/${app.id}`, asSession(owner));

    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.details).toEqual([expect.objectContaining({ field: 'refresh_reuse_grace_seconds' })]);
    expect(record.body.data.refresh_reuse_grace_seconds).toBeNull();
  });
});

describe('dynamic client registration (RFC 7591)', () => {
  it('registers a public client at the advertised endpoint, which then runs the code flow and is listed and revocable by the person who authorized it', async () => {
    const metadata = await call(stack.baseUrl, 'GET', '/.well-known/oauth-authorization-server');
    const registered = await call(stack.baseUrl, 'POST', new URL(metadata.body.registration_endpoint).pathname, {
      body: {
        client_name: 'Claude Code',
        redirect_uris: ['http://127.0.0.1/callback'],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        logo_uri: 'https://example.com/ignored.png',
      },
    });
    const clientId: string = registered.body.client_id;
    const { verifier, challenge } = pkce();
    const redirectUri = 'http://127.0.0.1:49152/callback';
    const requestId = await startAuthorization(stack.baseUrl, {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      state: 'dcr',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const consentPage = await call(stack.baseUrl, 'GET', `/oauth/consent?request=${requestId}`, { headers: { cookie: person.cookie } });
    const location = new URL((await decide(stack.baseUrl, person, requestId, 'approve')).headers.get('location')!);
    const tokens = await publicTokenRequest({
      grant_type: 'authorization_code',
      code: location.searchParams.get('code')!,
      redirect_uri: redirectUri,
      client_id: clientId,
      code_verifier: verifier,
    });
    const refreshed = await publicTokenRequest({
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token,
      client_id: clientId,
    });
    const listed = await call(stack.baseUrl, 'GET', '/api/v1/authorizations', asSession(person));
    const revoked = await call(stack.baseUrl, 'DELETE', `/api/v1/authorizations/${clientId}`, asSession(person));

    expect(registered.status).toBe(201);
    expect(registered.headers.get('cache-control')).toBe('no-store');
    expect(registered.body).toMatchObject({
      client_name: 'Claude Code',
      token_endpoint_auth_method: 'none',
      redirect_uris: ['http://127.0.0.1/callback'],
    });
    expect(registered.body).not.toHaveProperty('client_secret');
    expect(consentPage.text).toContain('Claude Code');
    expect(consentPage.text).toContain('did not review');
    expect(tokens.status).toBe(200);
    expect(refreshed.status).toBe(200);
    expect(listed.body.data).toContainEqual(
      expect.objectContaining({ id: clientId, application: expect.objectContaining({ name: 'Claude Code' }) }),
    );
    expect(revoked.status).toBe(200);
    expect((await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: refreshed.body.access_token })).status).toBe(401);
    // Nobody owns it: it is in no one's list of applications.
    expect((await call(stack.baseUrl, 'GET', '/api/v1/oauth/apps', asSession(person))).body.data).toEqual([]);
  });

  it('gives a confidential client its secret once, and refuses redirect URIs registered applications may not have, with the field named', async () => {
    const confidential = await call(stack.baseUrl, 'POST', '/api/v1/oauth/register', {
      body: { client_name: 'Build bot', redirect_uris: ['https://bot.example.com/callback'] },
    });
    const refusals = await Promise.all(
      [
        { redirect_uris: ['http://bot.example.com/callback'] },
        { redirect_uris: ['https://bot.example.com/cb#fragment'] },
        { redirect_uris: [] },
        { redirect_uris: ['https://bot.example.com/cb'], client_name: 'container-hosting CLI' },
        { redirect_uris: ['https://bot.example.com/cb'], grant_types: ['client_credentials'] },
      ].map((body) => call(stack.baseUrl, 'POST', '/api/v1/oauth/register', { body })),
    );

    expect(confidential.status).toBe(201);
    expect(confidential.body).toMatchObject({ token_endpoint_auth_method: 'client_secret_basic', client_secret_expires_at: 0 });
    expect(confidential.body.client_secret).toMatch(/^svcs_/);
    for (const refusal of refusals) {
      expect(refusal.status).toBe(400);
      expect(refusal.body.error.code).toBe('BAD_REQUEST');
      expect(refusal.body.error.details.length).toBeGreaterThan(0);
    }
  });

  it('answers 429 with Retry-After once one address has registered 10 clients in the hour', async () => {
    const answers = [];
    for (let index = 0; index < 12; index++) {
      answers.push(
        await call(stack.baseUrl, 'POST', '/api/v1/oauth/register', {
          body: { client_name: `Agent ${index}`, redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none' },
        }),
      );
    }

    // This file registered 2 before: the 11th from this address in the hour is refused.
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(8);
    expect(statuses.slice(8)).toEqual([429, 429, 429, 429]);
    expect(answers[8]!.body.error.code).toBe('RATE_LIMITED');
    expect(Number(answers[8]!.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
