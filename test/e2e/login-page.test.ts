import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, signedInUser, type SignedInUser } from '../support/api-client.js';
import { launchBrowser } from '../support/browser.js';
import { useStack } from '../support/local-stack.js';

const stack = useStack();
let browser: Browser;
let person: SignedInUser;

beforeAll(async () => {
  browser = await launchBrowser();
  person = await signedInUser(stack.baseUrl);
});

afterAll(async () => {
  await browser?.close();
});

describe('the login page in Chromium', () => {
  it('signs a person in, sets the session cookie and follows a same-site next', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${stack.baseUrl}/login?next=${encodeURIComponent('/api/v1/users/me')}`);
    await page.fill('#email', person.email);
    await page.fill('#password', person.password);
    await page.click('button[type=submit]');
    await page.waitForURL(`${stack.baseUrl}/api/v1/users/me`);
    expect(JSON.parse(await page.locator('body').innerText()).data.email).toBe(person.email);

    const [session] = (await context.cookies()).filter((cookie) => cookie.name === 'sv_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    expect(session!.value).toMatch(/^svss_/);
    await context.close();
  });

  it('shows the error on the form for a wrong password and keeps the email typed', async () => {
    const page = await browser.newPage();
    await page.goto(`${stack.baseUrl}/login`);
    await page.fill('#email', person.email);
    await page.fill('#password', 'not the password');
    await page.click('button[type=submit]');
    await expect.poll(() => page.locator('[role=alert]').innerText()).toContain('Wrong email or password');
    expect(await page.inputValue('#email')).toBe(person.email);
    expect(await page.inputValue('#password')).toBe('');
    await page.close();
  });

  it('ignores a next that points at another site', async () => {
    const page = await browser.newPage();
    await page.goto(`${stack.baseUrl}/login?next=${encodeURIComponent('//evil.example/steal')}`);
    await page.fill('#email', person.email);
    await page.fill('#password', person.password);
    await page.click('button[type=submit]');
    await page.waitForURL(`${stack.baseUrl}/login`);
    expect(await page.locator('h1').innerText()).toBe('Signed in');
    expect(await page.locator('body').innerText()).toContain(person.email);
    await page.close();
  });

  it('stays on this site for a next whose dot segments normalise to //host, both after sign-in and when already signed in', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const hostile = `${stack.baseUrl}/login?next=${encodeURIComponent('/%2e//evil.example/steal')}`;
    await page.goto(hostile);
    await page.fill('#email', person.email);
    await page.fill('#password', person.password);
    await page.click('button[type=submit]');
    await page.waitForURL(`${stack.baseUrl}/login`);
    expect(await page.locator('h1').innerText()).toBe('Signed in');
    // Signed in now: GET /login with the hostile next must not answer 303 to another host either.
    const response = await page.goto(`${stack.baseUrl}/login?next=${encodeURIComponent('/.//evil.example/steal')}`);
    expect(new URL(page.url()).host).toBe(new URL(stack.baseUrl).host);
    expect(response?.status()).toBe(200);
    expect(await page.locator('h1').innerText()).toBe('Signed in');
    await context.close();
  });

  it('sends the security headers that forbid framing and caching', async () => {
    const response = await call(stack.baseUrl, 'GET', '/login');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('refuses a form post without the CSRF value it handed out', async () => {
    const response = await call(stack.baseUrl, 'POST', '/login', {
      rawBody: new URLSearchParams({ email: person.email, password: person.password }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(response.status).toBe(403);
    expect(response.headers.get('set-cookie')).not.toMatch(/sv_session=svss_/);
  });
});
