import { beforeAll, describe, expect, it } from 'vitest';
import { call, errorEnvelope, personalAccessToken, signedInUser, type SignedInUser } from '../support/api-client.js';
import { useStack } from '../support/local-stack.js';
import { asSession, issuedTokens, registerApp, tokenRequest, type IssuedTokens, type RegisteredApp } from '../support/oauth-flow.js';

/** GET and DELETE /api/v1/authorizations: the applications a user authorized (docs/oauth.md). */

const REDIRECT_URI = 'http://127.0.0.1:8765/callback';

const stack = useStack();
let developer: SignedInUser;
let app: RegisteredApp;
let otherApp: RegisteredApp;

beforeAll(async () => {
  developer = await signedInUser(stack.baseUrl);
  app = await registerApp(stack.baseUrl, developer, {
    name: 'Fleet Dashboard',
    description: 'Charts your load',
    redirect_uris: [REDIRECT_URI],
  });
  otherApp = await registerApp(stack.baseUrl, developer, { name: 'Backup Bot', redirect_uris: [REDIRECT_URI] });
});

const list = (who: SignedInUser, query = '') => call(stack.baseUrl, 'GET', `/api/v1/authorizations${query}`, { token: who.sessionToken });
const revoke = (who: SignedInUser, id: string) => call(stack.baseUrl, 'DELETE', `/api/v1/authorizations/${id}`, asSession(who));
const me = (accessToken: string) => call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: accessToken });
const refresh = (forApp: RegisteredApp, tokens: IssuedTokens) =>
  tokenRequest(stack.baseUrl, forApp, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });

describe('GET /api/v1/authorizations', () => {
  it("lists the caller's authorizations newest first, with the application, scopes and times, paginated", async () => {
    const person = await signedInUser(stack.baseUrl);
    await issuedTokens(stack.baseUrl, person, app, 'containers:read');
    const newer = await issuedTokens(stack.baseUrl, person, otherApp);
    expect((await refresh(otherApp, newer)).status).toBe(200);

    const response = await list(person);

    expect(response.status).toBe(200);
    expect(response.body.data).toEqual([
      {
        id: otherApp.client_id,
        application: { client_id: otherApp.client_id, name: 'Backup Bot', description: '', kind: 'registered' },
        scopes: ['containers:read', 'containers:write'],
        created_at: expect.any(String),
        last_used_at: expect.any(String),
      },
      {
        id: app.client_id,
        application: { client_id: app.client_id, name: 'Fleet Dashboard', description: 'Charts your load', kind: 'registered' },
        scopes: ['containers:read'],
        created_at: expect.any(String),
        last_used_at: expect.any(String),
      },
    ]);
    const [latest] = response.body.data;
    expect(Date.parse(latest.last_used_at)).toBeGreaterThan(Date.parse(latest.created_at));
    // One entry per application: its id is the application's client id.
    expect(latest.id).toBe(otherApp.client_id);

    const first = await list(person, '?limit=1');
    expect(first.body.data.map((entry: { id: string }) => entry.id)).toEqual([latest.id]);
    const next = new URL(/<([^>]+)>; rel="next"/.exec(first.headers.get('link')!)![1]!);
    const second = await call(stack.baseUrl, 'GET', `${next.pathname}${next.search}`, { token: person.sessionToken });
    expect(second.body.data.map((entry: { application: { name: string } }) => entry.application.name)).toEqual(['Fleet Dashboard']);
  });

  it('lists an application once however many grants the person gave it, with the scopes of them all', async () => {
    // Prepare: a wider consent, then a narrower one (a second grant), then a refresh of the first.
    const person = await signedInUser(stack.baseUrl);
    const wider = await issuedTokens(stack.baseUrl, person, app, 'containers:write');
    await issuedTokens(stack.baseUrl, person, app, 'containers:read');
    await issuedTokens(stack.baseUrl, person, otherApp);
    const refreshed = await refresh(app, wider);
    expect(refreshed.status).toBe(200);

    // Act
    const response = await list(person);

    // Assess
    expect(response.body.data.map((entry: { application: { name: string } }) => entry.application.name)).toEqual([
      'Backup Bot',
      'Fleet Dashboard',
    ]);
    const [, fleet] = response.body.data;
    expect(fleet).toMatchObject({ id: app.client_id, scopes: ['containers:read', 'containers:write'] });
    // The first authorization's date, and the latest use of any of them.
    expect(Date.parse(fleet.created_at)).toBeLessThan(Date.parse(fleet.last_used_at));
    const pages = [await list(person, '?limit=1')];
    const next = new URL(/<([^>]+)>; rel="next"/.exec(pages[0]!.headers.get('link')!)![1]!);
    pages.push(await call(stack.baseUrl, 'GET', `${next.pathname}${next.search}`, { token: person.sessionToken }));
    expect(pages.map((page) => page.body.data.map((entry: { id: string }) => entry.id))).toEqual([[otherApp.client_id], [app.client_id]]);
    expect(pages[1]!.headers.get('link')).toBeNull();
  });

  it('lists nothing for someone who authorized nothing, and accepts a personal access token', async () => {
    const person = await signedInUser(stack.baseUrl);
    expect(await list(person)).toMatchObject({ status: 200, body: { data: [] } });
    const pat = await personalAccessToken(stack.baseUrl, person);
    expect((await call(stack.baseUrl, 'GET', '/api/v1/authorizations', { token: pat })).status).toBe(200);
  });

  it('refuses OAuth access tokens (403) and callers without credentials (401)', async () => {
    const person = await signedInUser(stack.baseUrl);
    const tokens = await issuedTokens(stack.baseUrl, person, app);
    expect(await call(stack.baseUrl, 'GET', '/api/v1/authorizations', { token: tokens.access_token })).toMatchObject({
      status: 403,
      body: errorEnvelope('FORBIDDEN'),
    });
    expect(await call(stack.baseUrl, 'GET', '/api/v1/authorizations')).toMatchObject({ status: 401, body: errorEnvelope('UNAUTHORIZED') });
  });
});

describe('DELETE /api/v1/authorizations/{id}', () => {
  it('stops the access token and the refresh token of the grant before it answers, and drops it from the list', async () => {
    const person = await signedInUser(stack.baseUrl);
    const kept = await issuedTokens(stack.baseUrl, person, otherApp);
    const tokens = await issuedTokens(stack.baseUrl, person, app);
    const rotated = (await refresh(app, tokens)).body as IssuedTokens;
    const id = (await list(person)).body.data.find(
      (entry: { application: { client_id: string } }) => entry.application.client_id === app.client_id,
    ).id;

    const response = await revoke(person, id);

    expect(response).toMatchObject({ status: 200, body: { data: 'revoked' } });
    expect((await me(rotated.access_token)).status).toBe(401);
    expect((await me(tokens.access_token)).status).toBe(401);
    expect(await refresh(app, rotated)).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });
    expect((await list(person)).body.data.map((entry: { application: { name: string } }) => entry.application.name)).toEqual([
      'Backup Bot',
    ]);
    expect((await me(kept.access_token)).status).toBe(200);
    expect(await revoke(person, id)).toMatchObject({ status: 404, body: errorEnvelope('NOT_FOUND') });
  });

  it('revokes every grant the person gave the application, and only theirs', async () => {
    const person = await signedInUser(stack.baseUrl);
    const stranger = await signedInUser(stack.baseUrl);
    const wider = await issuedTokens(stack.baseUrl, person, app);
    const narrower = await issuedTokens(stack.baseUrl, person, app, 'containers:read');
    const strangers = await issuedTokens(stack.baseUrl, stranger, app);

    const response = await revoke(person, app.client_id);

    expect(response).toMatchObject({ status: 200, body: { data: 'revoked' } });
    for (const tokens of [wider, narrower]) {
      expect((await me(tokens.access_token)).status).toBe(401);
      expect(await refresh(app, tokens)).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });
    }
    expect((await list(person)).body.data).toEqual([]);
    expect((await me(strangers.access_token)).status).toBe(200);
    expect(await revoke(person, app.client_id)).toMatchObject({ status: 404, body: errorEnvelope('NOT_FOUND') });
  });

  it("answers another user's authorization 404 and leaves it working", async () => {
    const person = await signedInUser(stack.baseUrl);
    const stranger = await signedInUser(stack.baseUrl);
    const tokens = await issuedTokens(stack.baseUrl, person, app);
    const [{ id }] = (await list(person)).body.data;

    expect(await revoke(stranger, id)).toMatchObject({ status: 404, body: errorEnvelope('NOT_FOUND') });
    expect((await me(tokens.access_token)).status).toBe(200);
    expect(await call(stack.baseUrl, 'DELETE', '/api/v1/authorizations/not-a-uuid', asSession(person))).toMatchObject({ status: 404 });
  });

  it('needs the CSRF token with a session, and refuses OAuth access tokens', async () => {
    const person = await signedInUser(stack.baseUrl);
    const tokens = await issuedTokens(stack.baseUrl, person, app);
    const [{ id }] = (await list(person)).body.data;

    expect(await call(stack.baseUrl, 'DELETE', `/api/v1/authorizations/${id}`, { token: person.sessionToken })).toMatchObject({
      status: 403,
      body: errorEnvelope('CSRF_REJECTED'),
    });
    expect(await call(stack.baseUrl, 'DELETE', `/api/v1/authorizations/${id}`, { token: tokens.access_token })).toMatchObject({
      status: 403,
      body: errorEnvelope('FORBIDDEN'),
    });
    expect((await me(tokens.access_token)).status).toBe(200);
  });
});
