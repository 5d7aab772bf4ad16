import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { packBuildContext } from '../../cli/src/build-context.js';
import { engineClient } from '../../lib/local/docker-engine.js';
import { personalAccessToken, signedInUser } from '../support/api-client.js';
import { appRequest } from '../support/app-request.js';
import { engineBuildAndRun } from '../support/engine-build-and-run.js';
import { TEST_IMAGE } from '../support/global-engine.js';
import { useSignedInStack } from '../support/local-stack.js';
import { pollUntil } from '../support/poll.js';
import { steadyClient } from '../support/steady-requests.js';

/*
 * Issue 33's journey on a real engine (Podman's Docker Engine API): a Dockerfile FROM a local
 * busybox image is uploaded, built by the engine and goes live; a second deploy and a rollback
 * happen under continuous requests with none failed; a failing RUN ends failed with its step while
 * the app keeps serving; an ordinary account's RUN step reaches none of the host's services nor the
 * admin's container; another account sees none of it. One container, in order: each step starts from the one before.
 */
// Two built images kept per container (the default is ten): the journey's third deploy that goes live prunes the first's.
// An account's build network goes 2 s after its last build (the default is a minute).
vi.hoisted(() => {
  process.env.BUILT_IMAGES_KEPT = '2';
  process.env.LOCAL_BUILD_NETWORK_LINGER_S = '2';
});

const engine = engineClient(inject('dockerHost'));
// An admin owns the journey's container; an ordinary account deploys too (its RUN steps are probed).
const stack = useSignedInStack({ role: 'admin' });
const { api } = stack;
let otherToken: string;
let containerId: string;
let appUrl: string;
/** A host service listening on every interface, as the API would with HOST=0.0.0.0. */
let hostService: Server;
const contexts: string[] = [];

/** A context whose image serves `content` at / (the base image's server serves /www). */
async function contextServing(content: string, extra = ''): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'deploy-context-'));
  contexts.push(dir);
  await writeFile(join(dir, 'Dockerfile'), `FROM ${TEST_IMAGE}\nUSER 0:0\nCOPY index.html /www/index.html\n${extra}USER 65534:65534\n`);
  await writeFile(join(dir, 'index.html'), `${content}\n`);
  await writeFile(join(dir, '.dockerignore'), 'secret.txt\n');
  await writeFile(join(dir, 'secret.txt'), 'never uploaded\n');
  return dir;
}

interface DeployRun {
  deploy: Record<string, any>;
  ms: number;
}

/** POST …/deploys, PUT the context where it says, then wait for a final state. */
async function deploy(dir: string, as?: string, target = containerId): Promise<DeployRun> {
  const startedAt = performance.now();
  const context = await packBuildContext(dir);
  const created = await api('POST', `/api/v1/containers/${target}/deploys`, { size_bytes: context.length }, as);
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const { upload, id } = created.body.data;
  expect(created.body.data.state).toBe('waiting_for_upload');
  const put = await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: context });
  expect(put.status, await put.clone().text()).toBe(200);
  // Every 200 ms, gentler than pollUntil's default: a build takes seconds, and DynamoDB Local shares the cores with it.
  const final = await pollUntil(
    () => api('GET', `/api/v1/containers/${target}/deploys/${id}`, undefined, as),
    (response) => ['live', 'failed', 'superseded'].includes(response.body.data?.state),
    120_000,
    200,
  );
  return { deploy: final.body.data, ms: performance.now() - startedAt };
}

const served = async () => (await appRequest(appUrl)).text.trim();

beforeAll(async () => {
  otherToken = await personalAccessToken(stack.baseUrl, await signedInUser(stack.baseUrl));
  hostService = createServer((_, response) => response.end('host service\n'));
  await new Promise<void>((resolve) => hostService.listen(0, '0.0.0.0', resolve));
  const created = await api('POST', '/api/v1/containers', { hostname: `dp-${process.pid}`, image: TEST_IMAGE, port: 8080 });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  containerId = created.body.data.id;
  appUrl = created.body.data.url;
  await pollUntil(
    () => api('GET', `/api/v1/containers/${containerId}`),
    (response) => response.body.data?.state === 'running',
    60_000,
  );
}, 120_000);

afterAll(async () => {
  await new Promise((resolve) => hostService?.close(resolve));
  await Promise.all(contexts.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('deploys from source on the engine', () => {
  let firstRelease: number;
  /** The journey's deploys that went live, oldest first. */
  const wentLive: Array<Record<string, any>> = [];

  it('builds the uploaded context and goes live: the URL serves the new content, as release 2, pinned by digest', async () => {
    // Prepare
    expect(await served()).toBe('served from the image');

    // Act
    const { deploy: first, ms } = await deploy(await contextServing('deploy one'));

    // Assess
    expect(first.state, first.state_reason).toBe('live');
    expect(first.image).toMatch(/@sha256:[0-9a-f]{64}$/);
    expect(first.release).toBe(2);
    expect(await served()).toBe('deploy one');
    const container = (await api('GET', `/api/v1/containers/${containerId}`)).body.data;
    expect(container.release).toBe(2);
    expect(container.image).toBe(first.image);
    const releases = (await api('GET', `/api/v1/containers/${containerId}/releases`)).body.data;
    expect(releases.map((release: any) => [release.version, release.cause])).toEqual([
      [2, 'deploy'],
      [1, 'create'],
    ]);
    expect(releases[0].deploy_id).toBe(first.id);
    // The create named a tag the engine held: its release is pinned by the engine's digest of it.
    expect(releases[1].image_digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(releases[1].workload.image).toMatch(/^localhost\/container-hosting-test\/web@sha256:/);
    firstRelease = first.release;
    wentLive.push(first);
    console.log(
      `deploy → live: ${Math.round(ms)} ms (load average ${loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')})`,
    );
  });

  it('keeps the build logs, in the shape of the container logs, and never uploaded what .dockerignore leaves out', async () => {
    // Act
    const deploys = (await api('GET', `/api/v1/containers/${containerId}/deploys`)).body.data;
    const logs = await api('GET', `/api/v1/containers/${containerId}/deploys/${deploys[0].id}/logs`);

    // Assess
    expect(logs.status).toBe(200);
    const messages = logs.body.data.map((line: any) => line.message).join('\n');
    expect(messages).toMatch(/COPY index.html/);
    expect(logs.body.data[0]).toEqual({ timestamp: expect.any(String), stream: expect.any(String), message: expect.any(String) });
    const check = await deploy(await contextServing('deploy check', 'COPY secret.txt /www/secret.txt\n'));
    expect(check.deploy.state).toBe('failed');
    expect(check.deploy.state_reason).toMatch(/COPY secret.txt/);
    expect(await served()).toBe('deploy one');
  });

  it('goes live a second time under continuous requests with no failed request, then serves the new content', async () => {
    // Prepare
    const client = steadyClient(appUrl);
    await sleep(300);

    // Act
    const { deploy: second } = await deploy(await contextServing('deploy two'));
    await sleep(300);
    const { statuses, bodies } = await client.stop();

    // Assess
    expect(second.state, second.state_reason).toBe('live');
    wentLive.push(second);
    expect(statuses.length).toBeGreaterThan(20);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect([...bodies].sort()).toEqual(['deploy one', 'deploy two']);
    expect(await served()).toBe('deploy two');
  });

  it('rolls back to the first release under continuous requests with no failed request', async () => {
    // Prepare
    const client = steadyClient(appUrl);
    await sleep(300);

    // Act
    const rolled = await api('POST', `/api/v1/containers/${containerId}/releases/${firstRelease}/rollback`);
    await sleep(300);
    const { statuses } = await client.stop();

    // Assess
    expect(rolled.status, JSON.stringify(rolled.body)).toBe(200);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect(await served()).toBe('deploy one');
    const releases = (await api('GET', `/api/v1/containers/${containerId}/releases`)).body.data;
    expect(releases[0]).toMatchObject({ cause: 'rollback', rolled_back_to: firstRelease, version: rolled.body.data.release });
  });

  it('lets exactly one of two racing rollbacks win; the other is 409 and changes nothing', async () => {
    // Act
    const [a, b] = await Promise.all([
      api('POST', `/api/v1/containers/${containerId}/releases/1/rollback`),
      api('POST', `/api/v1/containers/${containerId}/releases/${firstRelease}/rollback`),
    ]);

    // Assess
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const releases = (await api('GET', `/api/v1/containers/${containerId}/releases?limit=2`)).body.data;
    const winner = a.status === 200 ? a : b;
    expect(releases[0].version).toBe(winner.body.data.release);
    expect(releases[1].cause).toBe('rollback');
  });

  it('ends a failing RUN failed with the step and its exit code, and the app keeps serving', async () => {
    // Prepare
    const before = await served();

    // Act
    const { deploy: failing } = await deploy(await contextServing('never served', 'RUN echo about to fail && exit 3\n'));

    // Assess
    expect(failing.state).toBe('failed');
    expect(failing.state_reason).toMatch(/RUN echo about to fail && exit 3 failed \(exit code 3\)/);
    expect(await served()).toBe(before);
  });

  it('keeps the images of the newest BUILT_IMAGES_KEPT deploys that went live and the one running; a third removes the first’s', async () => {
    // Prepare: two deploys went live (the first runs again since the rollback), one failed
    const [first, second] = wentLive;
    const repository = first!.image.split('@')[0];
    const tagged = async () =>
      (await engine.listImages())
        .flatMap((image) => image.RepoTags ?? [])
        .filter((tag) => tag.startsWith(`${repository}:`))
        .sort();

    // The same context builds the same image, so an engine that ran this file before holds the first's image under
    // other repositories' tags too: its tag here is then only a name, and goes. As its only name it stays while an
    // engine container (a stopped task kept for its logs) uses the image: the engine refuses (409), and a later
    // deploy's retention tries again (docs/deploys.md, "Retention").
    const firstImage = await engine.getImage(first!.image).inspect();
    const usesFirstImage = async () => (await engine.listContainers({ all: true })).some((info) => info.ImageID === firstImage.Id);

    // Act
    const { deploy: third } = await deploy(await contextServing('deploy three'));

    // Assess
    expect(third.state, third.state_reason).toBe('live');
    const firstTagGoes = (firstImage.RepoTags ?? []).length > 1 || !(await usesFirstImage());
    const expected = [`${repository}:${second!.id}`, `${repository}:${third.id}`, ...(firstTagGoes ? [] : [`${repository}:${first!.id}`])];
    const kept = await pollUntil(tagged, (tags) => tags.length === expected.length, 15_000);
    expect(kept).toEqual(expected.sort());
    const releases = (await api('GET', `/api/v1/containers/${containerId}/releases?limit=100`)).body.data;
    const byDeploy = (deployId: string) => releases.find((release: any) => release.deploy_id === deployId);
    // The first's image loses its tag; the engine keeps the image itself while a stopped task kept
    // for its logs still uses it, and the release says truthfully whether a rollback could run it.
    const firstStillThere = await engine
      .getImage(first!.image)
      .inspect()
      .then(() => true)
      .catch(() => false);
    expect(byDeploy(first!.id).image_available).toBe(firstStillThere);
    expect(byDeploy(second!.id).image_available).toBe(true);
    expect(await served()).toBe('deploy three');
  });

  it("deploys an ordinary account's code end to end, with RUN steps that reach none of the host's services nor another account's container", async () => {
    // Prepare: the ordinary account's own container; the admin's running container is another account's
    const own = await api('POST', '/api/v1/containers', { hostname: `dp-user-${process.pid}`, image: TEST_IMAGE, port: 8080 }, otherToken);
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    const ownId = own.body.data.id;
    await pollUntil(
      () => api('GET', `/api/v1/containers/${ownId}`, undefined, otherToken),
      (response) => response.body.data?.state === 'running',
      60_000,
    );
    const [task] = await engine.listContainers({ filters: { label: [`container-hosting.container-id=${containerId}`] } });
    const neighbour = Object.values(task!.NetworkSettings.Networks).map((network) => network.IPAddress)[0]!;
    const port = (hostService.address() as AddressInfo).port;
    const apiPort = new URL(stack.baseUrl).port;
    const addresses = Object.values(networkInterfaces())
      .flat()
      .filter((address) => address && address.family === 'IPv4')
      .map((address) => address!.address);
    const targets = [...addresses.flatMap((address) => [`${address}:${port}`, `${address}:${apiPort}`]), `${neighbour}:8080`];
    const probe = targets
      .map(
        (target) =>
          `err=$(printf 'GET / HTTP/1.0\\r\\n\\r\\n' | timeout 8 nc -w 4 ${target.replace(':', ' ')} 2>&1 >/dev/null); case "$err" in *"can't connect"*|*"timed out"*) echo "probe ${target} closed";; *) echo "probe ${target} open";; esac`,
      )
      .join('; ');

    // Act
    const { deploy: probing } = await deploy(await contextServing('probe', `RUN ${probe}\n`), otherToken, ownId);
    const logs = await api('GET', `/api/v1/containers/${ownId}/deploys/${probing.id}/logs?limit=1000`, undefined, otherToken);

    // Assess
    const messages: string[] = logs.body.data.map((line: any) => line.message);
    expect(addresses).toContain('127.0.0.1');
    expect(probing.state, messages.join('\n')).toBe('live');
    for (const target of targets) expect(messages, messages.join('\n')).toContain(`probe ${target} closed`);
    expect(messages.filter((message) => /^probe \S+ open$/.test(message))).toEqual([]);
    const ownUrl = (await api('GET', `/api/v1/containers/${ownId}`, undefined, otherToken)).body.data.url;
    expect((await appRequest(ownUrl)).text.trim()).toBe('probe');
    // Its RUN steps ran on the account's own build network, made ahead; no network of a single build is left.
    expect(await engine.listNetworks({ filters: { name: [`container-hosting-build-${probing.id}`] } })).toEqual([]);
  });

  it("removes an account's build network a linger after its last build, so networks nobody uses do not slow every start", async () => {
    // Prepare: the builds above ended; each account's network lingers LOCAL_BUILD_NETWORK_LINGER_S.
    // Imported here, not at the top: the wiring reads the stack's settings when first imported.
    const { stackIdOf } = await import('../../lib/wiring/local-containers.js');
    const buildNetworks = () =>
      engine.listNetworks({
        filters: { label: [`container-hosting.stack=${stackIdOf(process.env.LOCAL_CONTAINER_DIR!)}`, 'container-hosting.build-account'] },
      });

    // Act
    const left = await pollUntil(buildNetworks, (networks) => networks.length === 0, 20_000);

    // Assess
    expect(left.map((network) => network.Name)).toEqual([]);
  });

  it('gives another account 404 on the deploys, their logs and the releases, and refuses it the built image', async () => {
    // Prepare
    const deploys = (await api('GET', `/api/v1/containers/${containerId}/deploys`)).body.data;
    const built = deploys.find((one: any) => one.state === 'live' || one.image)!;

    // Act
    const asked = performance.now();
    const responses = await Promise.all([
      api('GET', `/api/v1/containers/${containerId}/deploys`, undefined, otherToken),
      api('GET', `/api/v1/containers/${containerId}/deploys/${built.id}`, undefined, otherToken),
      // Asked to wait while the deploy is in the state it is in: still 404, at once.
      api('GET', `/api/v1/containers/${containerId}/deploys/${built.id}?changed_from=${built.state}&wait_s=20`, undefined, otherToken),
      api('GET', `/api/v1/containers/${containerId}/deploys/${built.id}/logs`, undefined, otherToken),
      api('GET', `/api/v1/containers/${containerId}/releases`, undefined, otherToken),
      api('POST', `/api/v1/containers/${containerId}/deploys`, { size_bytes: 100 }, otherToken),
      api('POST', `/api/v1/containers/${containerId}/releases/1/rollback`, undefined, otherToken),
    ]);
    const stolen = await api(
      'POST',
      '/api/v1/containers',
      { hostname: `dp-other-${process.pid}`, image: built.image, port: 8080 },
      otherToken,
    );

    // Assess
    expect(responses.map((response) => response.status)).toEqual([404, 404, 404, 404, 404, 404, 404]);
    expect(performance.now() - asked).toBeLessThan(10_000);
    expect(stolen.status).toBe(400);
    expect(JSON.stringify(stolen.body)).toMatch(/another account/);
  });

  it('refuses bad uploads with a clear error: another size, a second use, not a gzipped tar, a path out of the context, no Dockerfile', async () => {
    // Prepare
    const start = async (bytes: Buffer | string) => {
      const body = Buffer.from(bytes);
      const created = await api('POST', `/api/v1/containers/${containerId}/deploys`, { size_bytes: body.length });
      return { id: created.body.data.id as string, upload: created.body.data.upload, body };
    };
    const waitFinal = (id: string) =>
      pollUntil(
        () => api('GET', `/api/v1/containers/${containerId}/deploys/${id}`),
        (response) => ['live', 'failed', 'superseded'].includes(response.body.data?.state),
        60_000,
        200,
      ).then((response) => response.body.data);

    // Act / Assess: a body of another size than signed is refused before it is stored
    const wrongSize = await start('x'.repeat(100));
    const tooBig = await fetch(wrongSize.upload.url, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/gzip' },
      body: 'x'.repeat(101),
    });
    expect(tooBig.status).toBe(413);
    const notGzip = await fetch(wrongSize.upload.url, { method: 'PUT', headers: wrongSize.upload.headers, body: wrongSize.body });
    expect(notGzip.status).toBe(200);
    const again = await fetch(wrongSize.upload.url, { method: 'PUT', headers: wrongSize.upload.headers, body: wrongSize.body });
    expect(again.status).toBe(409);
    expect((await waitFinal(wrongSize.id)).state_reason).toBe('the context is not a gzipped tar');

    const { pack } = await import('tar-stream');
    const { gzipSync } = await import('node:zlib');
    const tarOf = async (entries: Array<{ name: string; type?: 'symlink'; linkname?: string; body?: string }>) => {
      const archive = pack();
      const chunks: Buffer[] = [];
      archive.on('data', (chunk) => chunks.push(chunk as Buffer));
      const ended = new Promise<void>((resolve) => archive.on('end', () => resolve()));
      for (const entry of entries)
        archive.entry({ name: entry.name, ...(entry.type ? { type: entry.type, linkname: entry.linkname! } : {}) }, entry.body ?? '');
      archive.finalize();
      await ended;
      return gzipSync(Buffer.concat(chunks));
    };
    for (const [entries, reason] of [
      [
        [
          { name: 'Dockerfile', body: 'FROM x' },
          { name: '../escape', body: 'x' },
        ],
        /leaves it: "..\/escape"/,
      ],
      [
        [
          { name: 'Dockerfile', body: 'FROM x' },
          { name: 'link', type: 'symlink', linkname: '/etc/passwd' },
        ],
        /link that leaves it/,
      ],
      [[{ name: 'app.js', body: 'x' }], /no Dockerfile in the context/],
    ] as const) {
      const bad = await start(await tarOf([...entries]));
      const put = await fetch(bad.upload.url, { method: 'PUT', headers: bad.upload.headers, body: bad.body });
      expect(put.status).toBe(200);
      const final = await waitFinal(bad.id);
      expect(final.state).toBe('failed');
      expect(final.state_reason).toMatch(reason);
    }
    expect(await served()).not.toBe('never served');
  });

  it('answers a read asked to wait while the deploy moves on (changed_from) at its change: no read between, live at the end', async () => {
    // Prepare
    const context = await packBuildContext(await contextServing('waited for'));
    const created = (await api('POST', `/api/v1/containers/${containerId}/deploys`, { size_bytes: context.length })).body.data;
    const put = await fetch(created.upload.url, { method: 'PUT', headers: created.upload.headers, body: context });
    expect(put.status).toBe(200);

    // Act: each read asks to be answered once the deploy left the state the last one saw, up to 20 s.
    const seen: string[] = [];
    let state = 'building';
    const asked = performance.now();
    while (!['live', 'failed', 'superseded'].includes(state) && seen.length < 6) {
      const read = await api('GET', `/api/v1/containers/${containerId}/deploys/${created.id}?changed_from=${state}&wait_s=20`);
      expect(read.status, JSON.stringify(read.body)).toBe(200);
      state = read.body.data.state;
      seen.push(state);
    }
    const ms = performance.now() - asked;

    // Assess: every answer was a change (building → deploying → live, or straight to live), none a poll's same state.
    expect(seen.at(-1)).toBe('live');
    expect(seen).not.toContain('building');
    expect(seen.length).toBeLessThanOrEqual(2);
    expect(ms).toBeLessThan(20_000);
    expect(await served()).toBe('waited for');
    const refused = await Promise.all([
      api('GET', `/api/v1/containers/${containerId}/deploys/${created.id}?changed_from=live&wait_s=21`),
      api('GET', `/api/v1/containers/${containerId}/deploys/${created.id}?changed_from=done`),
    ]);
    expect(refused.map((response) => [response.status, response.body.error.details[0].field])).toEqual([
      [400, 'wait_s'],
      [400, 'changed_from'],
    ]);
    expect(refused[0].body.error.message).toMatch(/at most 20/);
  });

  it('measures deploy → live against an engine build plus run of the same context', async () => {
    // Prepare
    const dir = await contextServing('measured');
    const context = await packBuildContext(dir);

    // Act: the engine's own build and run, as `podman build` + `podman run` would, until it answers
    const { ms: plainMs, container: bench } = await engineBuildAndRun(engine, context, `localhost/deploy-bench/${process.pid}:1`, 50);
    await bench.remove({ force: true });
    const { deploy: measured, ms } = await deploy(dir);

    // Assess
    expect(measured.state).toBe('live');
    console.log(
      `deploy → live ${Math.round(ms)} ms; engine build + run ${Math.round(plainMs)} ms; ratio ${(ms / plainMs).toFixed(2)} (load average ${loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')})`,
    );
  });
});
