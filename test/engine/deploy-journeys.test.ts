import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { engineClient } from '../../lib/local/docker-engine.js';
import { appRequest } from '../support/app-request.js';
import { launchBrowser } from '../support/browser.js';
import { cliOn } from '../support/cli-process.js';
import { TEST_IMAGE } from '../support/global-engine.js';
import { useSignedInStack } from '../support/local-stack.js';
import { pollUntil } from '../support/poll.js';
import { steadyClient } from '../support/steady-requests.js';

/*
 * Issue 33's local journeys not tested elsewhere, on Podman (deploys are admins' only on the local
 * stack): the CLI's deploy, releases and rollback as a person types them; the console's Rollback
 * button in Chromium; and a deploy whose new task never gets ready, which must leave the old
 * release serving. One container for the first two, in order: each step starts from the one before.
 */
const engine = engineClient(inject('dockerHost'));
const stack = useSignedInStack({ role: 'admin' });
const { api } = stack;
const cli = cliOn(stack, { build: false });
let browser: Browser;
const contexts: string[] = [];

/** A directory whose image serves `content` at / (the base image's server serves /www); `extra` lines go before the last USER. */
async function contextServing(content: string, extra = ''): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'deploy-journey-'));
  contexts.push(dir);
  await writeFile(join(dir, 'Dockerfile'), `FROM ${TEST_IMAGE}\nUSER 0:0\nCOPY index.html /www/index.html\n${extra}USER 65534:65534\n`);
  await writeFile(join(dir, 'index.html'), `${content}\n`);
  return dir;
}

/** What the URL serves once it answers 200 with `expected` (a new task takes a moment to be routed). */
const servedOnce = async (url: string, expected: string) =>
  (
    await pollUntil(
      () => appRequest(url),
      (response) => response.status === 200 && response.text.trim() === expected,
      30_000,
    )
  ).text.trim();

beforeAll(async () => {
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all(contexts.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('deploys, releases and rollback as a person drives them', () => {
  const hostname = `journey-${process.pid}`;
  let url: string;

  it('container-hosting deploy DIR --container NAME --create: creates it, builds, goes live and prints the URL, which serves the code', async () => {
    const first = await cli.run(['deploy', await contextServing('first from the CLI'), '--container', hostname, '--create']);

    expect(first.code, first.stderr).toBe(0);
    url = first.stdout.trim().split('\n').at(-1)!;
    expect(url).toMatch(new RegExp(`^http://${hostname}\\.localhost:\\d+/$`));
    expect(first.stderr).toContain(`Created ${hostname}`);
    // The build's output to its last line, the image it built, read once the build was seen ended or after the last state.
    expect(first.stderr).toMatch(/built localhost\/deploys\/\S+@sha256:[0-9a-f]{64}/);
    expect(await servedOnce(url, 'first from the CLI')).toBe('first from the CLI');
  }, 240_000);

  it('a second deploy goes live and serves the new code; releases lists every version, newest first, the running one marked', async () => {
    const second = await cli.run(['deploy', await contextServing('second from the CLI'), '--container', hostname]);
    const listed = await cli.run(['releases', hostname]);

    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/built localhost\/deploys\/\S+@sha256:[0-9a-f]{64}/);
    expect(await servedOnce(url, 'second from the CLI')).toBe('second from the CLI');
    expect(listed.code, listed.stderr).toBe(0);
    const rows = listed.stdout.trim().split('\n');
    expect(rows.map((row) => row.slice(0, 14).trimEnd())).toEqual(['* v3  deploy', '  v2  deploy', '  v1  create']);
  }, 240_000);

  it('container-hosting rollback NAME 2 makes release 4 of release 2, and the URL serves the first code again', async () => {
    const rolled = await cli.run(['rollback', hostname, '2']);
    const listed = await cli.run(['releases', hostname]);

    expect(rolled.code, rolled.stderr).toBe(0);
    expect(await servedOnce(url, 'first from the CLI')).toBe('first from the CLI');
    expect(listed.stdout.trim().split('\n')[0]!.slice(0, 16).trimEnd()).toBe('* v4  rollback');
  }, 120_000);

  it("the console's Rollback button rolls back to release 3: the record shows release 5 and the URL serves release 3's code", async () => {
    const found = await api('GET', `/api/v1/containers?limit=1000`);
    const id: string = found.body.data.find((container: { hostname: string }) => container.hostname === hostname).id;
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${stack.baseUrl}/login?next=${encodeURIComponent(`/console/containers/${id}`)}`);
    await page.fill('#email', stack.user.email);
    await page.fill('#password', stack.user.password);
    await page.click('button[type=submit]');
    await page.locator('#release-4', { hasText: '(running)' }).waitFor();

    page.once('dialog', (dialog) => void dialog.accept());
    await page.locator('#release-3').getByRole('button', { name: 'Rollback' }).click();
    await page.locator('#release-5', { hasText: '(running)' }).waitFor({ timeout: 60_000 });
    const cause = await page.locator('#release-5 td').nth(1).textContent();
    await context.close();
    const record = await api('GET', `/api/v1/containers/${id}`);

    expect(cause).toBe('rollback');
    expect(record.body.data.release).toBe(5);
    expect(record.body.data.state).toBe('running');
    expect(await servedOnce(url, 'second from the CLI')).toBe('second from the CLI');
  }, 120_000);
});

describe('deleting a container that was deployed to', () => {
  it('removes its releases and deploys from the table, its build logs and the images built for it', async () => {
    const hostname = `journey-${process.pid}`;
    const found = await api('GET', '/api/v1/containers?limit=1000');
    const { id, user_id: owner } = found.body.data.find((container: { hostname: string }) => container.hostname === hostname);
    const deployIds: string[] = (await api('GET', `/api/v1/containers/${id}/deploys`)).body.data.map((deploy: { id: string }) => deploy.id);
    const logDir = resolve(process.env.LOCAL_CONTAINER_DIR!, '..', 'builds', 'logs');
    const repository = `localhost/deploys/${owner}/${id}`;
    const builtImages = async () =>
      (await engine.listImages()).filter((image) =>
        [...(image.RepoTags ?? []), ...(image.RepoDigests ?? [])].some(
          (name) => name.startsWith(`${repository}:`) || name.startsWith(`${repository}@`),
        ),
      ).length;
    // Loaded here: lib/config reads the stack's address when first loaded, which startTestStack sets.
    const { queryPartition } = await import('../../lib/store/dynamo.js');
    const history = async () => (await queryPartition(`CONTAINER#${id}`)).length;
    const logsLeft = async () => deployIds.filter((deployId) => existsSync(join(logDir, `${deployId}.jsonl`))).length;
    const before = { items: await history(), logs: await logsLeft(), images: await builtImages() };

    const deleted = await api('DELETE', `/api/v1/containers/${id}`);

    expect(deleted.status).toBe(200);
    expect(deployIds).toHaveLength(2);
    // 5 releases and 2 deploys, the logs of both builds and the two images.
    expect(before).toEqual({ items: 8, logs: 2, images: 2 });
    expect({ items: await history(), logs: await logsLeft(), images: await builtImages() }).toEqual({ items: 0, logs: 0, images: 0 });
  }, 60_000);
});

describe('a deploy whose new task never gets ready', () => {
  it('ends failed with the readiness check’s last answer, and the old release serves throughout', async () => {
    const created = await api('POST', '/api/v1/containers', {
      hostname: `never-ready-${process.pid}`,
      image: TEST_IMAGE,
      port: 8080,
      health_check: { path: '/', grace_s: 5, interval_s: 1, timeout_s: 1 },
    });
    expect(created.status, created.text).toBe(200);
    const { id, url } = created.body.data;
    await pollUntil(
      () => api('GET', `/api/v1/containers/${id}`),
      (response) => response.body.data.state === 'running',
      60_000,
    );
    expect(await servedOnce(url, 'served from the image')).toBe('served from the image');
    // Builds, and then answers 404 at the health check's path: its server serves an empty directory.
    const broken = await contextServing('never served', 'RUN mkdir -p /empty\nCMD ["/bin/sh", "-c", "httpd -f -p $PORT -h /empty"]\n');

    const client = steadyClient(url, 100);
    const deployed = await cli.run(['deploy', broken, '--container', `never-ready-${process.pid}`, '--json']);
    const { statuses, bodies } = await client.stop();
    const deploys = await api('GET', `/api/v1/containers/${id}/deploys`);
    const record = await api('GET', `/api/v1/containers/${id}`);
    const releases = await api('GET', `/api/v1/containers/${id}/releases`);

    expect(deployed.code).not.toBe(0);
    const [deploy] = deploys.body.data;
    expect(deploy.state).toBe('failed');
    expect(deploy.state_reason).toMatch(/^image not ready: .*404/);
    console.info(`the failed deploy's reason: ${deploy.state_reason}`);
    expect(deployed.stderr).toContain(deploy.state_reason);
    // The deploy's release 2 is undone by release 3, which runs release 1's workload again.
    const [restored, failedRelease, first] = releases.body.data;
    expect([restored.version, failedRelease.version, first.version]).toEqual([3, 2, 1]);
    expect(restored.workload).toEqual(first.workload);
    expect(record.body.data).toMatchObject({ state: 'running', release: 3, image: first.workload.image });
    expect(statuses.length).toBeGreaterThan(10);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect([...bodies]).toEqual(['served from the image']);
    expect(await servedOnce(url, 'served from the image')).toBe('served from the image');
    // Its built image goes with it, so the run leaves nothing in the engine.
    expect((await api('DELETE', `/api/v1/containers/${id}`)).status).toBe(200);
  }, 240_000);
});
