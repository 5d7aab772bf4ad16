import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, signedInUser, type SignedInUser } from '../support/api-client.js';
import { launchBrowser } from '../support/browser.js';
import { startCallbackServer, type CallbackServer } from '../support/callback-server.js';
import { useStack } from '../support/local-stack.js';
import { authorizePath, issuedTokens, registerApp, tokenRequest, type IssuedTokens, type RegisteredApp } from '../support/oauth-flow.js';

/** The authorized applications page and remembered consent, in headless Chromium (docs/oauth.md). */

const stack = useStack();
let browser: Browser;
let callback: CallbackServer;
let developer: SignedInUser;
let app: RegisteredApp;
let otherApp: RegisteredApp;

beforeAll(async () => {
  callback = await startCallbackServer();
  browser = await launchBrowser();
  developer = await signedInUser(stack.baseUrl);
  app = await registerApp(stack.baseUrl, developer, {
    name: 'Fleet Dashboard',
    description: 'Charts the load of your containers',
    redirect_uris: [callback.redirectUri],
  });
  otherApp = await registerApp(stack.baseUrl, developer, { name: 'Backup Bot', redirect_uris: [callback.redirectUri] });
});

afterAll(async () => {
  await browser?.close();
  await callback?.close();
});

/** A fresh browser whose person signs in on the login page, as the page's round trip makes them. */
async function signedInBrowser(person: SignedInUser, path: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const response = await page.goto(`${stack.baseUrl}${path}`);
  expect(new URL(page.url()).pathname).toBe('/login');
  expect(response?.status()).toBe(200);
  await page.fill('#email', person.email);
  await page.fill('#password', person.password);
  await page.click('button[type=submit]');
  return { context, page };
}

const me = (accessToken: string) => call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: accessToken });
const refresh = (forApp: RegisteredApp, tokens: Pick<IssuedTokens, 'refresh_token'>) =>
  tokenRequest(stack.baseUrl, forApp, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
const rows = (page: Page) => page.locator('li.authorization');
const rowOf = (page: Page, name: string) => page.locator('li.authorization', { hasText: name });

describe('the authorized applications page', () => {
  it('lists what the person authorized; Revoke removes the row and stops that application at once', async () => {
    const person = await signedInUser(stack.baseUrl);
    const fleet = await issuedTokens(stack.baseUrl, person, app, 'containers:read');
    const backup = await issuedTokens(stack.baseUrl, person, otherApp);

    const { context, page } = await signedInBrowser(person, '/settings/authorizations');
    await page.waitForURL((url) => url.pathname === '/settings/authorizations');
    expect(await rows(page).count()).toBe(2);
    expect(await rowOf(page, 'Fleet Dashboard').innerText()).toContain('Charts the load of your containers');
    expect(await rowOf(page, 'Fleet Dashboard').locator('.scopes').innerText()).toBe('containers:read');
    expect(await rowOf(page, 'Backup Bot').locator('.scopes').innerText()).toBe('containers:read, containers:write');

    const response = await page.request.get(`${stack.baseUrl}/settings/authorizations`);
    expect(response.headers()).toMatchObject({
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
      'content-security-policy': expect.stringContaining("frame-ancestors 'none'"),
    });

    await rowOf(page, 'Fleet Dashboard').getByRole('button', { name: 'Revoke' }).click();
    await page.waitForLoadState('load');

    expect(new URL(page.url()).pathname).toBe('/settings/authorizations');
    await expect.poll(() => rows(page).count()).toBe(1);
    expect(await rowOf(page, 'Fleet Dashboard').count()).toBe(0);
    expect(await rowOf(page, 'Backup Bot').count()).toBe(1);
    expect((await me(fleet.access_token)).status).toBe(401);
    expect((await refresh(app, fleet)).status).toBe(400);
    expect((await me(backup.access_token)).status).toBe(200);

    await rowOf(page, 'Backup Bot').getByRole('button', { name: 'Revoke' }).click();
    await page.locator('#no-authorizations').waitFor();
    expect((await me(backup.access_token)).status).toBe(401);
    await context.close();
  });
});

describe('remembered consent', () => {
  const authorizeUrl = (extra: Record<string, string> = {}) =>
    `${stack.baseUrl}${authorizePath({
      response_type: 'code',
      client_id: app.client_id,
      redirect_uri: callback.redirectUri,
      state: `s-${callback.received.length}`,
      scope: 'containers:read containers:write',
      ...extra,
    })}`;

  /** Goes to the authorize URL and returns where the browser settled: the consent page or the application. */
  async function authorize(page: Page, extra: Record<string, string> = {}): Promise<URL> {
    await page.goto(authorizeUrl(extra));
    await page.waitForURL((url) => url.pathname === '/oauth/consent' || url.href.startsWith(callback.redirectUri));
    return new URL(page.url());
  }

  async function exchange(returned: URL): Promise<IssuedTokens> {
    const response = await tokenRequest(stack.baseUrl, app, {
      grant_type: 'authorization_code',
      code: returned.searchParams.get('code')!,
      redirect_uri: callback.redirectUri,
    });
    expect(response.status).toBe(200);
    return response.body;
  }

  it('skips the page while a live authorization covers the scopes, shows it for prompt=consent, and again after revocation', async () => {
    const person = await signedInUser(stack.baseUrl);
    const { context, page } = await signedInBrowser(
      person,
      authorizePath({
        response_type: 'code',
        client_id: app.client_id,
        redirect_uri: callback.redirectUri,
        state: 'first',
        scope: 'containers:read containers:write',
      }),
    );
    await page.waitForURL((url) => url.pathname === '/oauth/consent');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL((url) => url.href.startsWith(callback.redirectUri));
    const first = await exchange(new URL(page.url()));

    // Second time, asking for less: straight back to the application, with a code for exactly what was asked.
    const narrower = await authorize(page, { scope: 'containers:read', state: 'second' });
    expect(narrower.href.startsWith(callback.redirectUri)).toBe(true);
    expect(narrower.searchParams.get('state')).toBe('second');
    const second = await exchange(narrower);
    expect(first.scope).toBe('containers:read containers:write');
    expect(second.scope).toBe('containers:read');
    expect((await me(second.access_token)).status).toBe(200);

    // prompt=consent always shows the page.
    const prompted = await authorize(page, { prompt: 'consent', state: 'third' });
    expect(prompted.pathname).toBe('/oauth/consent');
    expect(await page.locator('#app-name').innerText()).toBe('Fleet Dashboard');

    // The application is one row, whatever number of approvals it exchanged, with the scopes of them all;
    // its one Revoke ends every one of them, and brings the page back.
    await page.goto(`${stack.baseUrl}/settings/authorizations`);
    expect(await rowOf(page, 'Fleet Dashboard').count()).toBe(1);
    expect(await rowOf(page, 'Fleet Dashboard').locator('.scopes').innerText()).toBe('containers:read, containers:write');
    await rowOf(page, 'Fleet Dashboard').getByRole('button', { name: 'Revoke' }).click();
    await expect.poll(() => rowOf(page, 'Fleet Dashboard').count()).toBe(0);
    expect((await me(first.access_token)).status).toBe(401);
    expect((await me(second.access_token)).status).toBe(401);

    const afterRevocation = await authorize(page, { state: 'fourth' });
    expect(afterRevocation.pathname).toBe('/oauth/consent');
    await context.close();
  });

  it('shows the page when the remembered authorization covers fewer scopes than asked for', async () => {
    const person = await signedInUser(stack.baseUrl);
    await issuedTokens(stack.baseUrl, person, app, 'containers:read');
    const { context, page } = await signedInBrowser(
      person,
      authorizePath({
        response_type: 'code',
        client_id: app.client_id,
        redirect_uri: callback.redirectUri,
        state: 'wider',
        scope: 'containers:read containers:write',
      }),
    );
    await page.waitForURL((url) => url.pathname === '/oauth/consent');
    expect(await page.locator('#scopes').innerText()).toContain('containers:write');
    await context.close();
  });
});
