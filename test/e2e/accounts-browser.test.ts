import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, signedInUser, type SignedInUser } from '../support/api-client.js';
import { launchBrowser } from '../support/browser.js';
import { useStack } from '../support/local-stack.js';

const stack = useStack();
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
});

/** A fresh browser at `path`, sent to the sign-in page, signing in there; dialogs are accepted. */
async function signInThrough(email: string, password: string, path: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  contexts.push(context);
  const page = await context.newPage();
  page.on('dialog', (dialog) => void dialog.accept());
  await page.goto(`${stack.baseUrl}${path}`);
  expect(new URL(page.url()).pathname).toBe('/login');
  await page.fill('#email', email);
  await page.fill('#password', password);
  await page.click('button[type=submit]');
  return page;
}

const rowOf = (page: Page, email: string) => page.locator(`#users tr[data-email="${email}"]`);

describe('accounts in the console', () => {
  it("an admin resets a person's password; the person must choose a new one at sign-in, then lands in the console", async () => {
    // Prepare
    const admin = await signedInUser(stack.baseUrl, 'admin');
    const person = await signedInUser(stack.baseUrl);
    const adminPage = await signInThrough(admin.email, admin.password, '/console/users');
    await adminPage.waitForURL(/\/console\/users$/);

    // Act: reset from the Users page.
    await rowOf(adminPage, person.email)
      .getByRole('button', { name: `Reset the password of ${person.email}` })
      .click();
    const oneTime = await adminPage.locator('#one-time-password').inputValue();

    // Assess: the list says so, and the person's sign-in asks for a new password.
    // The page shows the one-time password first and reloads the list after it (web/console/users-page.ts): waited for.
    await rowOf(adminPage, person.email)
      .locator('.status', { hasText: /^Must set a new password$/ })
      .waitFor({ timeout: 10_000 });
    const personPage = await signInThrough(person.email, oneTime, '/console');
    await personPage.locator('#new_password').waitFor();
    await expect(personPage.locator('p.error').textContent()).resolves.toContain('An admin reset your password');
    await personPage.fill('#password', oneTime);
    await personPage.fill('#new_password', 'chosen in the browser 37');
    await personPage.click('button[type=submit]');
    await personPage.waitForURL(/\/console\/containers$/);
    expect(
      (await call(stack.baseUrl, 'POST', '/api/v1/sessions', { body: { email: person.email, password: 'chosen in the browser 37' } }))
        .status,
    ).toBe(200);
  });

  it('an admin disables an account: its open console is signed out and its sign-in says disabled; enabling lets it back', async () => {
    const admin = await signedInUser(stack.baseUrl, 'admin');
    const person = await signedInUser(stack.baseUrl);
    const personPage = await signInThrough(person.email, person.password, '/console');
    await personPage.waitForURL(/\/console\/containers$/);
    const adminPage = await signInThrough(admin.email, admin.password, '/console/users');
    await adminPage.waitForURL(/\/console\/users$/);
    // An admin's own row offers no Disable.
    await expect(
      rowOf(adminPage, admin.email)
        .getByRole('button', { name: `Disable ${admin.email}` })
        .count(),
    ).resolves.toBe(0);

    await rowOf(adminPage, person.email)
      .getByRole('button', { name: `Disable ${person.email}` })
      .click();
    await rowOf(adminPage, person.email)
      .getByRole('button', { name: `Enable ${person.email}` })
      .waitFor();
    await expect(rowOf(adminPage, person.email).locator('.status').textContent()).resolves.toBe('Disabled');

    // The person's open console: the next page load needs a sign-in, which is refused.
    await personPage.reload();
    await personPage.waitForURL(/\/login/);
    await personPage.fill('#email', person.email);
    await personPage.fill('#password', person.password);
    await personPage.click('button[type=submit]');
    await expect(personPage.locator('p.error').textContent()).resolves.toContain('disabled');

    await rowOf(adminPage, person.email)
      .getByRole('button', { name: `Enable ${person.email}` })
      .click();
    await rowOf(adminPage, person.email)
      .getByRole('button', { name: `Disable ${person.email}` })
      .waitFor();
    await personPage.fill('#password', person.password);
    await personPage.click('button[type=submit]');
    await personPage.waitForURL(/\/console\/containers$/);
  });

  it('a person changes their own password on the Account page; their other browser is signed out; no Users page for them', async () => {
    const person: SignedInUser = await signedInUser(stack.baseUrl);
    const otherBrowser = await signInThrough(person.email, person.password, '/console');
    await otherBrowser.waitForURL(/\/console\/containers$/);
    const page = await signInThrough(person.email, person.password, '/console/account');
    await page.waitForURL(/\/console\/account$/);
    await expect(page.getByRole('link', { name: 'Users' }).count()).resolves.toBe(0);

    await page.getByLabel('Current password').fill('not the password');
    await page.getByLabel('New password').fill('a new long password 37');
    await page.getByRole('button', { name: 'Change password' }).click();
    await expect(page.locator('#current_password-error').textContent()).resolves.toBe('is wrong');

    await page.getByLabel('Current password').fill(person.password);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.locator('#password-changed').waitFor();

    await otherBrowser.reload();
    await otherBrowser.waitForURL(/\/login/);
    await page.reload();
    await page.waitForURL(/\/console\/account$/);
  });
});
