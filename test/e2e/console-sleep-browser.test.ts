import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, personalAccessToken, signedInUser } from '../support/api-client.js';
import { appRequest } from '../support/app-request.js';
import { launchBrowser } from '../support/browser.js';
import { useStack } from '../support/local-stack.js';
import { pollUntil } from '../support/poll.js';
import { sleepNow } from '../support/sleepers.js';

/*
 * Issue 26 as a new user meets it: a container with idle_timeout_s 30 is asleep in the console,
 * its URL in the browser answers the app's page, and the console then shows it running with its
 * last wake time. It is put to sleep as the idle sweep does, without waiting out its 30 s of
 * idleness: when a container falls asleep is test/e2e/container-sleep.test.ts's (and, on the engine,
 * test/engine/sleep-and-wake.test.ts's); what the console shows of it is this file's.
 */
vi.hoisted(() => Object.assign(process.env, { RECONCILE_INTERVAL_MS: '500' }));

/** Where the screenshots for the closing note go (outside the repository); unset, none are taken. */
const SHOTS = process.env.CONSOLE_SHOTS_DIR;

const stack = useStack();
let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
});

async function shot(page: Page, name: string): Promise<void> {
  if (SHOTS) await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
}

describe('sleep and wake in a browser', () => {
  it('shows the container asleep, its URL answers the app, and the console then shows the last wake', async () => {
    const person = await signedInUser(stack.baseUrl);
    const token = await personalAccessToken(stack.baseUrl, person);
    const api = (method: string, path: string, body?: unknown) => call(stack.baseUrl, method, path, { token, body });
    const hostname = `console-sleep-${process.pid}`;
    const created = await api('POST', '/api/v1/containers', { hostname, idle_timeout_s: 30 });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const { id, url } = created.body.data;
    await pollUntil(
      () => api('GET', `/api/v1/containers/${id}`),
      (response) => response.body.data.state === 'running',
      10_000,
    );
    expect((await appRequest(url)).status).toBe(200);
    await sleepNow(id);
    await pollUntil(
      () => api('GET', `/api/v1/containers/${id}`),
      (response) => response.body.data.state === 'stopped',
      40_000,
    );

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${stack.baseUrl}/console/containers/${id}`);
    await page.fill('#email', person.email);
    await page.fill('#password', person.password);
    await page.click('button[type=submit]');
    await page.waitForURL(new RegExp(`/console/containers/${id}$`));
    await expect(page.locator('#state .state').textContent()).resolves.toBe('☾ sleeping');
    await expect(page.locator('#asleep').textContent()).resolves.toBe('wakes on its next request');
    await expect(page.locator('#state-reason').textContent()).resolves.toBe('idle');
    // Asleep is stopped: Start wakes it, and there is nothing to stop or restart.
    await expect(page.getByRole('button', { name: 'Start', exact: true }).isEnabled()).resolves.toBe(true);
    await expect(page.getByRole('button', { name: 'Stop', exact: true }).isEnabled()).resolves.toBe(false);
    await expect(page.getByLabel('Idle timeout (s)').inputValue()).resolves.toBe('30');
    await shot(page, 'sleep-1-asleep');

    const list = await context.newPage();
    await list.goto(`${stack.baseUrl}/console/containers`);
    await expect(list.locator(`#containers tr[data-hostname="${hostname}"] .state`).textContent()).resolves.toBe('☾ sleeping');
    await list.close();

    const app = await context.newPage();
    const response = await app.goto(url);
    expect(response?.status()).toBe(200);
    await expect(app.locator('body').textContent()).resolves.toBe(`Hello from ${hostname}\n`);

    await page.reload();
    await expect(page.locator('#last-wake').textContent()).resolves.toMatch(/^\(last wake \d+ ms\)$/);
    await expect(page.locator('#asleep').count()).resolves.toBe(0);
    await shot(page, 'sleep-2-woken');
    await context.close();
    await api('DELETE', `/api/v1/containers/${id}`);
  }, 90_000);
});
