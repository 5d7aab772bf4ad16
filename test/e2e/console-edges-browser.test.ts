import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, personalAccessToken, signedInUser, type SignedInUser } from '../support/api-client.js';
import { launchBrowser } from '../support/browser.js';
import { startCallbackServer } from '../support/callback-server.js';
import { useStack } from '../support/local-stack.js';
import { authorizePath, registerApp } from '../support/oauth-flow.js';
import { pollUntil } from '../support/poll.js';

/*
 * Issue 37, item 5: the console's rough edges as a newcomer met them, each in Chromium. The
 * sleeping container's badge is in console-sleep-browser.test.ts, which has a container asleep.
 */

const stack = useStack();
let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
});

/** Answers every request and prints nothing, so its logs stay empty. */
const QUIET_SERVER = "require('node:http').createServer((q, r) => r.end('quiet')).listen(Number(process.env.PORT), '127.0.0.1');";

/** A fresh browser signed in on the sign-in page, then at `path`. */
async function signedInAt(person: SignedInUser, path: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${stack.baseUrl}/login?next=${encodeURIComponent(path)}`);
  await page.fill('#email', person.email);
  await page.fill('#password', person.password);
  await page.click('button[type=submit]');
  await page.waitForURL((url) => url.pathname === path.split('?')[0]);
  return { context, page };
}

/** A running container of `person`'s that prints nothing. */
async function quietContainer(person: SignedInUser, hostname: string): Promise<string> {
  const token = await personalAccessToken(stack.baseUrl, person);
  const created = await call(stack.baseUrl, 'POST', '/api/v1/containers', {
    token,
    body: { hostname, command: [process.execPath, '-e', QUIET_SERVER] },
  });
  expect(created.status, created.text).toBe(200);
  const id: string = created.body.data.id;
  await pollUntil(
    () => call(stack.baseUrl, 'GET', `/api/v1/containers/${id}`, { token }),
    (response) => response.body.data.state === 'running',
    20_000,
  );
  return id;
}

const button = (page: Page, name: string) => page.getByRole('button', { name, exact: true });

describe("the console's rough edges in a browser", () => {
  it("shows the API's own words beside the token fields, creates a token with the scopes chosen, and copies it", async () => {
    const person = await signedInUser(stack.baseUrl);
    const { context, page } = await signedInAt(person, '/console/tokens');
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.baseUrl });

    await page.getByLabel('Name', { exact: true }).fill('   ');
    await page.getByLabel('Expires in (days)').fill('0');
    await button(page, 'Create token').click();
    await page.locator('#token-name-error').waitFor();
    const nameError = await page.locator('#token-name-error').textContent();
    const daysError = await page.locator('#token-days-error').textContent();

    await page.getByLabel('Name', { exact: true }).fill('read-only bot');
    await page.getByLabel('Expires in (days)').fill('30');
    await page.getByLabel(/^containers:write/).uncheck();
    await page.getByLabel(/^account/).uncheck();
    await button(page, 'Create token').click();
    const token = await page.locator('#new-token').inputValue();
    await button(page, 'Copy').click();
    await page.locator('#copy-status', { hasText: 'Copied' }).waitFor();
    const copied = await page.evaluate<string>('navigator.clipboard.readText()');
    const listed = await page.locator('#tokens tr[data-name="read-only bot"] .scopes').textContent();

    expect(nameError).toBe('must not be empty');
    expect(daysError).toBe('must be a whole number of days from 1 to 365');
    expect(copied).toBe(token);
    expect(listed).toBe('containers:read');
    expect((await call(stack.baseUrl, 'GET', '/api/v1/containers', { token })).status).toBe(200);
    const write = await call(stack.baseUrl, 'POST', '/api/v1/containers', { token, body: { hostname: `ro-${process.pid}` } });
    expect(write.status).toBe(403);
    await context.close();
  }, 60_000);

  it("names each container's owner in an admin's list", async () => {
    const owner = await signedInUser(stack.baseUrl);
    const admin = await signedInUser(stack.baseUrl, 'admin');
    const hostname = `owned-${process.pid}`;
    const id = await quietContainer(owner, hostname);
    const { context, page } = await signedInAt(admin, '/console/containers');

    const row = page.locator(`#containers tr[data-hostname="${hostname}"]`);
    await row.locator('td.owner', { hasText: owner.email }).waitFor();
    const headers = await page.locator('#containers thead th').allTextContents();

    expect(headers.slice(0, 3)).toEqual(['Hostname', 'Owner', 'State']);
    await context.close();

    // The owner's own list has no such column: every row is theirs.
    const own = await signedInAt(owner, '/console/containers');
    await own.page.locator(`#containers tr[data-hostname="${hostname}"]`).waitFor();
    expect(await own.page.locator('#containers thead th', { hasText: 'Owner' }).count()).toBe(0);
    await own.context.close();
    await call(stack.baseUrl, 'DELETE', `/api/v1/containers/${id}`, { token: await personalAccessToken(stack.baseUrl, owner) });
  }, 60_000);

  it('enables Start, Stop and Restart only in the states where they do something', async () => {
    const person = await signedInUser(stack.baseUrl);
    const id = await quietContainer(person, `buttons-${process.pid}`);
    const { context, page } = await signedInAt(person, `/console/containers/${id}`);
    const enabled = async () =>
      Object.fromEntries(await Promise.all(['Start', 'Stop', 'Restart'].map(async (name) => [name, await button(page, name).isEnabled()])));

    await page.locator('#state', { hasText: 'running' }).waitFor();
    const whileRunning = await enabled();
    await button(page, 'Stop').click();
    await page.locator('#state', { hasText: 'stopped' }).waitFor({ timeout: 15_000 });
    await button(page, 'Start').and(page.locator(':enabled')).waitFor();
    const whileStopped = await enabled();

    expect(whileRunning).toEqual({ Start: false, Stop: true, Restart: true });
    expect(whileStopped).toEqual({ Start: true, Stop: false, Restart: false });
    await context.close();
  }, 60_000);

  it('says Loading… while the logs and charts load, and No lines yet only once the logs answered empty', async () => {
    const person = await signedInUser(stack.baseUrl);
    const id = await quietContainer(person, `loading-${process.pid}`);
    const context = await browser.newContext();
    const page = await context.newPage();
    let answer: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      answer = resolve;
    });
    // The logs and the charts' history answer only when the test lets them.
    await page.route(/\/api\/v1\/containers\/[\w-]+\/(logs|metrics\/history)\?/, async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(`${stack.baseUrl}/login?next=${encodeURIComponent(`/console/containers/${id}`)}`);
    await page.fill('#email', person.email);
    await page.fill('#password', person.password);
    await page.click('button[type=submit]');
    await page.locator('#logs-stdout').waitFor();

    const whileLoading = {
      stdout: await page.locator('#logs-stdout').textContent(),
      stderr: await page.locator('#logs-stderr').textContent(),
      cpu: await page.locator('#cpu-chart .latest').textContent(),
      memory: await page.locator('#memory-chart .latest').textContent(),
    };
    answer();
    await page.locator('#logs-stdout', { hasText: 'No lines yet' }).waitFor();
    await page.locator('#cpu-chart .latest', { hasNotText: 'Loading…' }).waitFor();

    expect(whileLoading).toEqual({ stdout: 'Loading…', stderr: 'Loading…', cpu: 'Loading…', memory: 'Loading…' });
    await context.close();
  }, 60_000);

  it('says beside each setting when a change applies: the idle timeout at once (empty never sleeps), the image at the next start', async () => {
    const person = await signedInUser(stack.baseUrl);
    const id = await quietContainer(person, `hints-${process.pid}`);
    const { context, page } = await signedInAt(person, `/console/containers/${id}`);

    const idleHint = await page.locator('#settings-idle_timeout_s-hint').textContent();
    const imageHint = await page.locator('#settings-image-hint').textContent();
    const restartPolicyHint = await page.locator('#settings-restart_policy-hint').textContent();
    await page.getByLabel('Idle timeout (s)').fill('600');
    await button(page, 'Save settings').click();
    await page.getByText('Saved.').waitFor();
    const afterIdle = await page.locator('form.settings [role=status]').textContent();
    await page.getByLabel('Port').fill('8081');
    await button(page, 'Save settings').click();
    await page.getByText('Port: applies from the next start or restart.').waitFor();

    expect(idleHint).toMatch(/never sleeps/);
    expect(idleHint).toMatch(/[Aa] change applies at once$/);
    expect(restartPolicyHint).toMatch(/[Aa] change applies at once$/);
    expect(imageHint).toMatch(/[Aa] change applies from the next start or restart$/);
    expect(afterIdle).toBe('Saved. Idle timeout (s): applies at once.');
    await context.close();
  }, 60_000);
});

describe("the pages' Content-Security-Policy in Chromium", () => {
  it('logs no console error on any page, and the consent form sends a native app back to http://[::1]:PORT', async () => {
    const admin = await signedInUser(stack.baseUrl, 'admin');
    const id = await quietContainer(admin, `csp-${process.pid}`);
    const callback = await startCallbackServer('::1');
    try {
      const app = await registerApp(stack.baseUrl, admin, {
        name: 'Agent CLI v6',
        redirect_uris: ['http://[::1]/callback'],
        token_endpoint_auth_method: 'none',
      });
      const context = await browser.newContext();
      const errors: string[] = [];
      const page = await context.newPage();
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(`${page.url()}: ${message.text()}`);
      });
      page.on('pageerror', (error) => errors.push(`${page.url()}: ${error.message}`));

      await page.goto(`${stack.baseUrl}/login`);
      await page.fill('#email', admin.email);
      await page.fill('#password', admin.password);
      await page.click('button[type=submit]');
      const visited: string[] = [];
      for (const path of [
        '/console/containers',
        `/console/containers/${id}`,
        '/console/tokens',
        '/console/applications',
        '/console/users',
        '/console/account',
        '/settings/authorizations',
        '/device',
      ]) {
        await page.goto(`${stack.baseUrl}${path}`);
        await page.locator('h1').first().waitFor();
        // Lets the page's first reads answer, and Chromium report what it refused.
        await page.waitForLoadState('networkidle');
        visited.push(new URL(page.url()).pathname);
      }

      // A native app's authorization request with its IPv6 loopback redirect URI, on a port of its own.
      const redirectUri = callback.redirectUri;
      await page.goto(
        `${stack.baseUrl}${authorizePath({
          response_type: 'code',
          client_id: app.client_id,
          redirect_uri: redirectUri,
          state: 'from-the-test',
          code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
          code_challenge_method: 'S256',
        })}`,
      );
      await page.locator('h1').first().waitFor();
      visited.push(new URL(page.url()).pathname);
      await button(page, 'Approve').click();
      await page.waitForURL((url) => url.href.startsWith(redirectUri));
      await context.close();

      expect(visited).toEqual([
        '/console/containers',
        `/console/containers/${id}`,
        '/console/tokens',
        '/console/applications',
        '/console/users',
        '/console/account',
        '/settings/authorizations',
        '/device',
        '/oauth/consent',
      ]);
      expect(callback.received).toHaveLength(1);
      expect(callback.received[0]!.searchParams.get('state')).toBe('from-the-test');
      expect(callback.received[0]!.searchParams.get('code')).toMatch(/./);
      expect(errors).toEqual([]);
    } finally {
      await callback.close();
    }
  }, 90_000);
});
