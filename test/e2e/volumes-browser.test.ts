import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedInUser } from '../support/api-client.js';
import { launchBrowser } from '../support/browser.js';
import { useStack } from '../support/local-stack.js';

/**
 * The console's volumes in Chromium (issue 34, item 9), on the local stack's process runtime: a
 * volume made on the volumes page, mounted by a container made with the create form's mount rows,
 * shown attached (a link to the container), refused deletion with the API's words, snapshotted,
 * downloaded and restored.
 */

const execFileAsync = promisify(execFile);

const stack = useStack();
let browser: Browser;
let downloads: string;

beforeAll(async () => {
  browser = await launchBrowser();
  downloads = await mkdtemp(join(tmpdir(), 'volume-downloads-'));
});

afterAll(async () => {
  await browser?.close();
  if (downloads) await rm(downloads, { recursive: true, force: true });
});

/** Writes data/notes.txt on its volume (the mount at /data is `data` in a process's working directory), then serves. */
const WRITER =
  "require('node:fs').writeFileSync('data/notes.txt', 'written before the snapshot'); require('node:http').createServer((q, r) => r.end('ok')).listen(Number(process.env.PORT), '127.0.0.1');";

const volumeRow = (page: Page, name: string) => page.locator(`#volumes tr[data-name="${name}"]`);

describe('volumes in the console', () => {
  it('creates a volume, mounts it from the container form, shows it attached, refuses its delete, snapshots, downloads and restores it', async () => {
    const person = await signedInUser(stack.baseUrl);
    const volume = `site-data-${process.pid}`;
    const hostname = `mounted-${process.pid}`;
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    const page = await context.newPage();
    await page.goto(`${stack.baseUrl}/console/volumes`);
    await page.fill('#email', person.email);
    await page.fill('#password', person.password);
    await page.click('button[type=submit]');
    await page.waitForURL(/\/console\/volumes$/);
    await expect(page.locator('h1').textContent()).resolves.toBe('Volumes');

    await page.getByLabel('Name').fill(volume);
    await page.getByLabel('Size (GB)').fill('2');
    await page.getByRole('button', { name: 'Create volume' }).click();
    await volumeRow(page, volume).waitFor();
    await expect(volumeRow(page, volume).locator('td').nth(1).textContent()).resolves.toBe('2 GB');
    await expect(volumeRow(page, volume).locator('td.attached').textContent()).resolves.toBe('—');

    // The container form: a mount is a row, its volume chosen from the account's volumes.
    await page.getByRole('link', { name: 'Containers', exact: true }).click();
    await page.getByLabel('Hostname').fill(hostname);
    await page.getByLabel('Port').fill('3000');
    await page.getByLabel('Command').fill([process.execPath, '-e', WRITER].join('\n'));
    await page.getByRole('button', { name: 'Add mount' }).click();
    await page.locator('#create-mounts-volume-0').selectOption({ label: `${volume} (2 GB)` });
    await page.locator('#create-mounts-path-0').fill('/data');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.locator(`#containers tr[data-hostname="${hostname}"]`).getByText('running').waitFor({ timeout: 30_000 });

    // Attached, with a link to the container that mounts it; its settings show the mount's row.
    await page.getByRole('link', { name: 'Volumes', exact: true }).click();
    const attached = volumeRow(page, volume).locator('td.attached').getByRole('link', { name: hostname });
    await attached.waitFor();
    await attached.click();
    await page.waitForURL(/\/console\/containers\/[\w-]+$/);
    await expect(page.locator('h1').textContent()).resolves.toBe(hostname);
    // The mount's row shows the volume chosen, by name.
    await page.locator('#settings-mounts-volume-0 option:checked', { hasText: `${volume} (2 GB)` }).waitFor({ state: 'attached' });
    await expect(page.locator('#settings-mounts-path-0').inputValue()).resolves.toBe('/data');
    await page.goBack();

    // Deleting a mounted volume: the API's 409, in its words.
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: `Delete volume ${volume}` }).click();
    await expect(page.locator('#volumes-problem').textContent()).resolves.toMatch(
      new RegExp(
        `^${volume} was not deleted: The volume is mounted by container [\\w-]+; remove it from that container's mounts \\(or delete the container\\) first$`,
      ),
    );
    await volumeRow(page, volume).waitFor();

    // A snapshot, taken while the container runs: ready, and said to mix moments.
    await page.getByRole('button', { name: `Snapshots of ${volume}` }).click();
    await page.getByRole('button', { name: 'Take a snapshot' }).click();
    const ready = page.locator('#snapshot-list tr[data-state="ready"]');
    await ready.waitFor({ timeout: 20_000 });
    await expect(ready.locator('td').nth(3).textContent()).resolves.toBe('no: taken while running');

    const [download] = await Promise.all([page.waitForEvent('download'), ready.getByRole('button', { name: 'Download' }).click()]);
    const file = join(downloads, download.suggestedFilename());
    await download.saveAs(file);
    expect(download.suggestedFilename()).toMatch(/\.tar\.gz$/);
    await expect(execFileAsync('tar', ['-xzOf', file, './notes.txt']).then(({ stdout }) => stdout)).resolves.toBe(
      'written before the snapshot',
    );

    await ready.getByRole('button', { name: 'Restore…' }).click();
    await page.getByLabel('Name of the new volume').fill(`${volume}-copy`);
    await page.getByRole('button', { name: 'Restore', exact: true }).click();
    await volumeRow(page, `${volume}-copy`).waitFor();
    await expect(volumeRow(page, `${volume}-copy`).locator('td').nth(1).textContent()).resolves.toBe('2 GB');
    await context.close();
  });
});
