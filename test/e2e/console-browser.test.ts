import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, personalAccessToken, signedInUser, type SignedInUser } from '../support/api-client.js';
import { appRequest } from '../support/app-request.js';
import { launchBrowser } from '../support/browser.js';
import { useStack } from '../support/local-stack.js';
import { pollUntil } from '../support/poll.js';
import { issuedTokens } from '../support/oauth-flow.js';

/** Where the screenshots for the closing note go (outside the repository); unset, none are taken. */
const SHOTS = process.env.CONSOLE_SHOTS_DIR;

const stack = useStack();
let browser: Browser;

// Samples every second, so a container's charts have points within the test's patience. Set before the
// imports read lib/config: set in beforeAll, after they had, it left the sampler at its default 10 s.
vi.hoisted(() => {
  process.env.LOCAL_METRICS_SAMPLE_MS = '1000';
});

beforeAll(async () => {
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
});

/**
 * A one-line server (the form takes one argument per line): prints its greeting at start and a
 * line on stderr, logs each request, and answers with its greeting.
 */
const SERVER =
  "console.log('starting with GREETING=' + process.env.GREETING); console.error('a line on stderr'); require('node:http').createServer((q, r) => { console.log('GET ' + q.url); r.end('greeting: ' + process.env.GREETING); }).listen(Number(process.env.PORT), '127.0.0.1');";

async function shot(page: Page, name: string): Promise<void> {
  if (SHOTS) await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
}

/** A fresh browser at `path`, sent to the sign-in page, signing in there. */
async function signInThrough(person: SignedInUser, path: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${stack.baseUrl}${path}`);
  expect(new URL(page.url()).pathname).toBe('/login');
  await page.fill('#email', person.email);
  await page.fill('#password', person.password);
  await page.click('button[type=submit]');
  return { context, page };
}

const rowOf = (page: Page, hostname: string) => page.locator(`#containers tr[data-hostname="${hostname}"]`);

describe('the console in a browser', () => {
  it('signs in, creates a container, follows its logs and charts, edits and restarts it, stops and deletes it', async () => {
    const person = await signedInUser(stack.baseUrl);
    const hostname = `console-${process.pid}`;

    // Signed out, /console goes to the sign-in page and comes back to the containers page.
    const { context, page } = await signInThrough(person, '/console');
    await page.waitForURL(/\/console\/containers$/);
    await expect(page.locator('h1').textContent()).resolves.toBe('Containers');

    // Create through the form.
    await page.getByLabel('Hostname').fill(hostname);
    await page.getByLabel('Image').fill('ghcr.io/acme/web:1.0');
    await page.getByLabel('Port').fill('3000');
    await page.getByLabel('CPU cores').selectOption('1');
    await page.getByLabel('Memory (MB)').fill('2048');
    await page.getByLabel('Disk (GB)').fill('20');
    await page.getByRole('button', { name: 'Add variable' }).click();
    await page.locator('#create-env-name-0').fill('GREETING');
    await page.locator('#create-env-value-0').fill('hello');
    await page.getByLabel('Command').fill([process.execPath, '-e', SERVER].join('\n'));
    await shot(page, '1-create-form-filled');
    await page.getByRole('button', { name: 'Create' }).click();

    // The row appears and reaches running by itself.
    await rowOf(page, hostname).getByText('running').waitFor({ timeout: 30_000 });
    await shot(page, '2-containers-running');

    // Its page: state, URL, log lines arriving without a reload, both charts drawing points.
    await rowOf(page, hostname).getByRole('link', { name: hostname, exact: true }).click();
    await page.waitForURL(/\/console\/containers\/[\w-]+$/);
    await expect(page.locator('#state').textContent()).resolves.toContain('running');
    const url = (await page.locator('#container-url').getAttribute('href'))!;
    await page.locator('#logs-stdout', { hasText: 'starting with GREETING=hello' }).waitFor({ timeout: 15_000 });
    await page.locator('#logs-stderr', { hasText: 'a line on stderr' }).waitFor();
    expect(await page.locator('#logs-stdout').textContent()).not.toContain('a line on stderr');
    await appRequest(`${url}from-the-test`);
    await page.locator('#logs-stdout', { hasText: 'GET /from-the-test' }).waitFor({ timeout: 15_000 });
    for (const chart of ['#cpu-chart', '#memory-chart']) {
      const points = await pollUntil(
        () => page.locator(chart).getAttribute('data-points'),
        (drawn) => Number(drawn) > 0,
        20_000,
      );
      expect([chart, Number(points)]).toEqual([chart, expect.any(Number)]);
      expect(Number(points)).toBeGreaterThan(0);
    }
    await shot(page, '3-container-page');

    // Reloading keeps the page; the time from navigation to a drawn chart.
    const containerPath = new URL(page.url()).pathname;
    await page.reload();
    await page.locator('#memory-chart[data-first-drawn-ms]').waitFor({ timeout: 20_000 });
    expect(new URL(page.url()).pathname).toBe(containerPath);
    const drawnMs = Number(await page.locator('#memory-chart').getAttribute('data-first-drawn-ms'));
    console.info(`navigation to a drawn chart: ${drawnMs} ms`);
    expect(drawnMs).toBeGreaterThan(0);

    // Change an environment variable, save, restart: the new output at the URL.
    await page.locator('#settings-env-value-0').fill('changed in the console');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Saved.').waitFor();
    await page.getByRole('button', { name: 'Restart' }).click();
    await page.getByRole('button', { name: 'Restart' }).and(page.locator(':enabled')).waitFor({ timeout: 30_000 });
    await expect(page.locator('#state').textContent()).resolves.toContain('running');
    const answered = await pollUntil(
      () => appRequest(url),
      (response) => response.text === 'greeting: changed in the console',
      10_000,
    );
    expect(answered.text).toBe('greeting: changed in the console');

    // Stop, then delete (confirmed): gone from the table.
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.locator('#state', { hasText: 'stopped' }).waitFor({ timeout: 15_000 });
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.waitForURL(/\/console\/containers$/);
    await page.locator('#no-containers').waitFor();
    expect(await rowOf(page, hostname).count()).toBe(0);
    await context.close();
  }, 120_000);

  it('shows an API error next to the field it names', async () => {
    const person = await signedInUser(stack.baseUrl);
    const { context, page } = await signInThrough(person, '/console/containers');
    await page.waitForURL(/\/console\/containers$/);

    await page.getByLabel('Hostname').fill(`too-small-${process.pid}`);
    await page.getByLabel('Memory (MB)').fill('3');
    await page.getByRole('button', { name: 'Create' }).click();

    const error = page.locator('#create-memory_mb-error');
    await error.waitFor();
    expect(await page.getByLabel('Memory (MB)').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Memory (MB)').getAttribute('aria-describedby')).toContain('create-memory_mb-error');
    expect(await page.locator('#create-hostname-error').count()).toBe(0);
    await shot(page, '4-field-error');
    await context.close();
  });

  it("shows each of the envelope's details beside its own field, a nested one and a variable's name too", async () => {
    const person = await signedInUser(stack.baseUrl);
    const { context, page } = await signInThrough(person, '/console/containers');
    await page.waitForURL(/\/console\/containers$/);

    await page.getByLabel('Hostname').fill(`details-${process.pid}`);
    await page.getByLabel('CPU cores').selectOption('1');
    await page.getByLabel('Memory (MB)').fill('3');
    await page.locator('#create-health_check-path').fill('no-leading-slash');
    await page.getByRole('button', { name: 'Add variable' }).click();
    await page.locator('#create-env-name-0').fill('PORT');
    await page.locator('#create-env-value-0').fill('1');
    await page.getByRole('button', { name: 'Create' }).click();

    await page.locator('#create-memory_mb-error').waitFor();
    expect(await page.locator('#create-memory_mb-error').textContent()).toMatch(/./);
    expect(await page.locator('#create-health_check-path-error').textContent()).toMatch(/./);
    expect(await page.locator('#create-health_check-path').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#create-env-error').textContent()).toMatch(/^PORT: is reserved/);
    // Every problem sits beside its field: none is left for the form's own alert.
    expect(await page.locator('form.create > p.error').count()).toBe(0);
    await shot(page, '5-field-details');
    await context.close();
  });

  it('creates a token, shows it once, and deletes it', async () => {
    const person = await signedInUser(stack.baseUrl);
    const { context, page } = await signInThrough(person, '/console/tokens');
    await page.waitForURL(/\/console\/tokens$/);

    await page.getByLabel('Name', { exact: true }).fill('deploy bot');
    await page.getByRole('button', { name: 'Create token' }).click();
    const token = await page.locator('#new-token').inputValue();
    expect(token).toMatch(/^svpat_/);
    expect((await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token })).status).toBe(200);
    await shot(page, '5-token-shown-once');

    await page.reload();
    await page.locator('#tokens tr[data-name="deploy bot"]').waitFor();
    expect(await page.content()).not.toContain(token);
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete token deploy bot' }).click();
    await page.locator('#no-tokens').waitFor();
    expect((await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token })).status).toBe(401);
    await context.close();
  });

  it('registers an application, shows its secret once, edits it, rotates the secret and deletes it', async () => {
    const person = await signedInUser(stack.baseUrl);
    const { context, page } = await signInThrough(person, '/console/applications');
    await page.waitForURL(/\/console\/applications$/);

    await page.locator('#register-name').fill('Fleet Dashboard');
    await page.locator('#register-redirect-uris').fill('https://fleet.example.com/callback');
    await page.getByRole('button', { name: 'Register' }).click();
    const secret = await page.locator('#new-client-secret').inputValue();
    expect(secret.length).toBeGreaterThan(20);
    await page.locator('#apps li[data-name="Fleet Dashboard"]').waitFor();
    expect(await page.locator('#apps li[data-name="Fleet Dashboard"] .refresh-grace').textContent()).toBe("the service's");
    await shot(page, '6-application-secret-once');

    await page.getByRole('button', { name: 'Edit Fleet Dashboard' }).click();
    await page.locator('input[id$="-name"][id^="edit-"]').fill('Fleet Charts');
    await page.locator('input[id$="-refresh-grace"][id^="edit-"]').fill('30');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.locator('#apps li[data-name="Fleet Charts"]').waitFor();
    expect(await page.locator('#apps li[data-name="Fleet Charts"] .refresh-grace').textContent()).toBe('30 s');

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Rotate the secret of Fleet Charts' }).click();
    await pollUntil(
      () => page.locator('#new-client-secret').inputValue(),
      (value) => value !== secret,
    );
    expect(await page.locator('#new-client-secret').inputValue()).not.toBe(secret);

    await page.reload();
    expect(await page.content()).not.toContain(secret);
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete Fleet Charts' }).click();
    await page.locator('#no-apps').waitFor();
    await context.close();
  });

  it('shows a connected agent with who stands behind it, and disconnecting it stops its token at once', async () => {
    const person = await signedInUser(stack.baseUrl);
    const registered = await call(stack.baseUrl, 'POST', '/api/v1/oauth/register', {
      body: { client_name: 'Deploy Agent', redirect_uris: ['https://agent.example/callback'] },
    });
    expect(registered.status).toBe(201);
    const agent = {
      id: '',
      description: '',
      created_at: '',
      name: 'Deploy Agent',
      redirect_uris: ['https://agent.example/callback'],
      ...registered.body,
    };
    const tokens = await issuedTokens(stack.baseUrl, person, agent, 'containers:read');
    const { context, page } = await signInThrough(person, '/console/applications');
    await page.waitForURL(/\/console\/applications$/);

    const row = page.locator('#connections li[data-name="Deploy Agent"]');
    await row.waitFor();
    expect(await row.getAttribute('data-kind')).toBe('dynamic_registration');
    expect(await row.locator('.origin').textContent()).toBe('Agent that registered itself; not reviewed by this service');
    expect(await row.locator('dd').nth(1).textContent()).toBe('containers:read');
    await shot(page, '7-connected-agent');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Disconnect Deploy Agent' }).click();
    await page.locator('#no-connections').waitFor();

    expect((await call(stack.baseUrl, 'GET', '/api/v1/containers', { token: tokens.access_token })).status).toBe(401);
    await context.close();
  });
});

describe('the console over HTTP', () => {
  it('sends a signed-out browser to sign in with the URL to come back to', async () => {
    const home = await call(stack.baseUrl, 'GET', '/console');
    expect(home.status).toBe(302);
    expect(home.headers.get('location')).toBe('/login?next=%2Fconsole');
    const deep = await call(stack.baseUrl, 'GET', '/console/containers/abc?x=1');
    expect(deep.headers.get('location')).toBe(`/login?next=${encodeURIComponent('/console/containers/abc?x=1')}`);
  });

  it('serves the shell with the page headers and no inline script, and the hashed files as immutable', async () => {
    const person = await signedInUser(stack.baseUrl);
    const shell = await call(stack.baseUrl, 'GET', '/console/containers', { headers: { cookie: person.cookie } });
    expect(shell.status).toBe(200);
    const csp = shell.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("'unsafe-eval'");
    expect(shell.headers.get('x-frame-options')).toBe('DENY');
    expect(shell.text).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    const script = /<script type="module" src="([^"]+)"/.exec(shell.text)![1]!;
    expect(script).toMatch(/^\/console\/assets\/main-\w+\.js$/);
    const asset = await call(stack.baseUrl, 'GET', script);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await call(stack.baseUrl, 'GET', '/console/assets/main-NOPE.js')).status).toBe(404);
  });
});

describe('GET /api/v1/containers/{id}/metrics/history on the local stack', () => {
  it('answers one point per minute from the local samples, oldest first, and refuses windows outside 1..1440', async () => {
    const owner = await signedInUser(stack.baseUrl);
    const token = await personalAccessToken(stack.baseUrl, owner);
    const created = await call(stack.baseUrl, 'POST', '/api/v1/containers', {
      token,
      body: { hostname: `history-${process.pid}`, command: [process.execPath, '-e', SERVER], port: 3000 },
    });
    const id = created.body.data.id;
    await pollUntil(
      () => call(stack.baseUrl, 'GET', `/api/v1/containers/${id}`, { token }),
      (response) => response.body.data.state === 'running',
      15_000,
    );

    const history = await pollUntil(
      () => call(stack.baseUrl, 'GET', `/api/v1/containers/${id}/metrics/history?minutes=5`, { token }),
      (response) => response.body.data?.length > 0,
      15_000,
    );
    const outsider = await personalAccessToken(stack.baseUrl, await signedInUser(stack.baseUrl));

    expect(history.status).toBe(200);
    const [point] = history.body.data;
    expect(point).toEqual({
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00\.000Z$/),
      cpu_percent: expect.any(Number),
      memory_used_mb: expect.any(Number),
      disk_used_gb: expect.any(Number),
    });
    expect(point.memory_used_mb).toBeGreaterThan(1);
    const times = history.body.data.map((entry: { timestamp: string }) => entry.timestamp);
    expect([...times].sort()).toEqual(times);
    expect(new Set(times).size).toBe(times.length);
    expect((await call(stack.baseUrl, 'GET', `/api/v1/containers/${id}/metrics/history`, { token })).status).toBe(200);
    for (const minutes of ['0', '1441', 'x', '-1']) {
      const refused = await call(stack.baseUrl, 'GET', `/api/v1/containers/${id}/metrics/history?minutes=${minutes}`, { token });
      expect([minutes, refused.status, refused.body.error?.code]).toEqual([minutes, 400, 'BAD_REQUEST']);
    }
    expect((await call(stack.baseUrl, 'GET', `/api/v1/containers/${id}/metrics/history`, { token: outsider })).status).toBe(404);
  }, 60_000);
});
