import * as client from 'openid-client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, signedInUser, type SignedInUser } from '../support/api-client.js';
import { launchBrowser } from '../support/browser.js';
import { startCallbackServer, type CallbackServer } from '../support/callback-server.js';
import { useStack } from '../support/local-stack.js';
import { wholeTableAsText } from '../support/table-scan.js';
import { registerApp, type RegisteredApp } from '../support/oauth-flow.js';

const stack = useStack();
let browser: Browser;
let context: BrowserContext;
let callback: CallbackServer;
let developer: SignedInUser;
let person: SignedInUser;
let app: RegisteredApp;
/** Every secret handed out in this file, for the final plaintext scan. */
const issuedSecrets: string[] = [];

beforeAll(async () => {
  // One after another, so that whatever started is assigned and closed by afterAll if a later start fails.
  callback = await startCallbackServer();
  browser = await launchBrowser();
  context = await browser.newContext();
  developer = await signedInUser(stack.baseUrl);
  person = await signedInUser(stack.baseUrl);
  app = await registerApp(stack.baseUrl, developer, {
    name: 'Fleet Dashboard',
    description: 'Charts the load of your containers',
    redirect_uris: [callback.redirectUri],
  });
  issuedSecrets.push(app.client_secret, developer.sessionToken, person.sessionToken);
});

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await callback?.close();
});

/** RFC 8414 discovery; plain http is fine only because the stack listens on loopback. */
function discover(clientAuthentication: client.ClientAuth): Promise<client.Configuration> {
  return client.discovery(new URL(stack.baseUrl), app.client_id, app.client_secret, clientAuthentication, {
    algorithm: 'oauth2',
    execute: [client.allowInsecureRequests],
  });
}

interface AuthorizationStart {
  url: URL;
  state: string;
  codeVerifier: string;
}

async function authorizationStart(config: client.Configuration, scope = 'containers:read containers:write'): Promise<AuthorizationStart> {
  const codeVerifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: callback.redirectUri,
    scope,
    state,
    code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
  });
  return { url, state, codeVerifier };
}

/** Clicks Approve or Deny and returns the URL the application's callback server received. */
async function decideInBrowser(page: Page, decision: 'Approve' | 'Deny'): Promise<URL> {
  const before = callback.received.length;
  await page.getByRole('button', { name: decision }).click();
  await page.waitForURL((url) => url.href.startsWith(callback.redirectUri));
  expect(callback.received).toHaveLength(before + 1);
  return callback.received.at(-1)!;
}

const rejectionOf = async (promise: Promise<unknown>): Promise<Error & { code?: string; cause?: unknown }> => {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('expected a rejection');
};

const meWith = (accessToken: string) => call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: accessToken });

describe('the authorization code flow with openid-client and Chromium', () => {
  it('signs in, consents, exchanges with PKCE and Basic auth, refreshes twice, and a replay kills the grant', async () => {
    const config = await discover(client.ClientSecretBasic(app.client_secret));
    expect(config.serverMetadata().token_endpoint).toBe(`${stack.baseUrl}/api/v1/oauth/token`);
    const start = await authorizationStart(config);

    const page = await context.newPage();
    await page.goto(start.url.href);
    expect(new URL(page.url()).pathname).toBe('/login');
    await page.fill('#email', person.email);
    await page.fill('#password', person.password);
    await page.click('button[type=submit]');
    await page.waitForURL((url) => url.pathname === '/oauth/consent');
    expect(await page.locator('#app-name').innerText()).toBe('Fleet Dashboard');
    expect(await page.locator('#app-description').innerText()).toBe('Charts the load of your containers');
    expect(await page.locator('#user-email').innerText()).toBe(person.email);
    expect(await page.locator('#redirect-host').innerText()).toBe(new URL(callback.redirectUri).host);
    const scopes = await page.locator('#scopes').innerText();
    expect(scopes).toContain('containers:read');
    expect(scopes).toContain('See your containers');
    expect(scopes).toContain('containers:write');

    const returned = await decideInBrowser(page, 'Approve');
    await page.close();
    expect(returned.searchParams.get('state')).toBe(start.state);
    issuedSecrets.push(returned.searchParams.get('code')!);

    const tokens = await client.authorizationCodeGrant(config, returned, {
      pkceCodeVerifier: start.codeVerifier,
      expectedState: start.state,
    });
    issuedSecrets.push(tokens.access_token, tokens.refresh_token!);
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.expires_in).toBe(900);
    expect(tokens.scope).toBe('containers:read containers:write');
    expect(tokens.access_token).toMatch(/^svat_/);
    expect(tokens.refresh_token).toMatch(/^svrt_/);

    const me = await client.fetchProtectedResource(config, tokens.access_token, new URL(`${stack.baseUrl}/api/v1/users/me`), 'GET');
    expect(me.status).toBe(200);
    expect(((await me.json()) as { data: { email: string } }).data.email).toBe(person.email);

    const once = await client.refreshTokenGrant(config, tokens.refresh_token!);
    const twice = await client.refreshTokenGrant(config, once.refresh_token!);
    issuedSecrets.push(once.access_token, once.refresh_token!, twice.access_token, twice.refresh_token!);
    expect(new Set([tokens.refresh_token, once.refresh_token, twice.refresh_token]).size).toBe(3);
    expect((await meWith(twice.access_token)).status).toBe(200);

    // The library sends form-encoded requests, so it gets RFC 6749 error bodies and raises them as such.
    const replay = await rejectionOf(client.refreshTokenGrant(config, tokens.refresh_token!));
    expect(replay).toBeInstanceOf(client.ResponseBodyError);
    expect(replay).toMatchObject({ error: 'invalid_grant', status: 400 });

    expect((await meWith(twice.access_token)).status).toBe(401);
    expect((await meWith(once.access_token)).status).toBe(401);
    const descendant = await rejectionOf(client.refreshTokenGrant(config, twice.refresh_token!));
    expect(descendant).toMatchObject({ error: 'invalid_grant', status: 400 });
  });

  it('works with client_secret_post too, without signing in again, and revokes through the library', async () => {
    const config = await discover(client.ClientSecretPost(app.client_secret));
    const start = await authorizationStart(config, 'containers:read');

    const page = await context.newPage();
    await page.goto(start.url.href);
    expect(new URL(page.url()).pathname).toBe('/oauth/consent');
    expect(await page.locator('#scopes').innerText()).not.toContain('containers:write');
    const returned = await decideInBrowser(page, 'Approve');
    await page.close();
    issuedSecrets.push(returned.searchParams.get('code')!);

    const tokens = await client.authorizationCodeGrant(config, returned, {
      pkceCodeVerifier: start.codeVerifier,
      expectedState: start.state,
    });
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    issuedSecrets.push(tokens.access_token, tokens.refresh_token!, refreshed.access_token, refreshed.refresh_token!);
    expect(refreshed.scope).toBe('containers:read');
    expect((await meWith(refreshed.access_token)).status).toBe(200);

    await client.tokenRevocation(config, refreshed.refresh_token!);

    expect((await meWith(refreshed.access_token)).status).toBe(401);
    const afterRevocation = await rejectionOf(client.refreshTokenGrant(config, refreshed.refresh_token!));
    expect(afterRevocation).toMatchObject({ error: 'invalid_grant', status: 400 });
  });

  it('sends access_denied and the state to the application when the person denies', async () => {
    const config = await discover(client.ClientSecretBasic(app.client_secret));
    const start = await authorizationStart(config);

    const page = await context.newPage();
    await page.goto(start.url.href);
    const returned = await decideInBrowser(page, 'Deny');
    await page.close();

    expect(Object.fromEntries(returned.searchParams)).toEqual({ error: 'access_denied', state: start.state, iss: stack.baseUrl });
    const denial = await rejectionOf(
      client.authorizationCodeGrant(config, returned, { pkceCodeVerifier: start.codeVerifier, expectedState: start.state }),
    );
    expect(denial).toBeInstanceOf(client.AuthorizationResponseError);
    expect((denial as client.AuthorizationResponseError).error).toBe('access_denied');
  });

  it('leaves no client secret, code, refresh token or access token in plain text in the table', async () => {
    const { text: everything } = await wholeTableAsText();

    expect(issuedSecrets.length).toBeGreaterThanOrEqual(14);
    expect(issuedSecrets.filter((secret) => everything.includes(secret))).toEqual([]);
  });
});
