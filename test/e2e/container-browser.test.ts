import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, personalAccessToken, signedInUser } from '../support/api-client.js';
import { launchBrowser } from '../support/browser.js';
import { useStack } from '../support/local-stack.js';
import { pollUntil } from '../support/poll.js';

const stack = useStack();
let browser: Browser;
let token: string;

beforeAll(async () => {
  browser = await launchBrowser();
  token = await personalAccessToken(stack.baseUrl, await signedInUser(stack.baseUrl));
});

afterAll(async () => {
  await browser?.close();
});

const PAGE = `require('node:http').createServer((q, r) => { r.setHeader('content-type', 'text/html'); r.end('<h1>' + process.env.GREETING + '</h1>'); }).listen(Number(process.env.PORT), '127.0.0.1');`;

describe("a container's url in a browser", () => {
  it('shows the page the container serves, and after a PATCH and a restart the new one at the same url', async () => {
    const created = await call(stack.baseUrl, 'POST', '/api/v1/containers', {
      token,
      body: { hostname: `browser-${process.pid}`, env: { GREETING: 'Hello from a container' }, command: [process.execPath, '-e', PAGE] },
    });
    const { id, url } = created.body.data;
    await pollUntil(
      () => call(stack.baseUrl, 'GET', `/api/v1/containers/${id}`, { token }),
      (response) => response.body.data.state === 'running',
    );
    const page = await browser.newPage();

    // Chromium resolves *.localhost to loopback itself.
    const first = await pollUntil(
      () => page.goto(url).then((response) => response?.status()),
      (status) => status === 200,
    );
    const before = await page.textContent('h1');
    await call(stack.baseUrl, 'PATCH', `/api/v1/containers/${id}`, { token, body: { env: { GREETING: 'Changed with PATCH' } } });
    await call(stack.baseUrl, 'POST', `/api/v1/containers/${id}/restart`, { token });
    const second = await pollUntil(
      () => page.goto(url).then((response) => response?.status()),
      (status) => status === 200,
    );
    const after = await page.textContent('h1');

    expect(url).toMatch(/^http:\/\/browser-\d+\.localhost:\d+\/$/);
    expect([first, before]).toEqual([200, 'Hello from a container']);
    expect([second, after]).toEqual([200, 'Changed with PATCH']);
  });
});
