import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { engineClient } from '../../lib/local/docker-engine.js';
import { VOLUME_LABEL } from '../../lib/local/docker-volumes.js';
import { personalAccessToken, signedInUser } from '../support/api-client.js';
import { appRequest } from '../support/app-request.js';
import { TEST_IMAGE } from '../support/global-engine.js';
import { cgiApp, NOTES_SCRIPTS, removeStackVolumes } from '../support/engine-volumes.js';
import { useSignedInStack } from '../support/local-stack.js';
import { pollUntil } from '../support/poll.js';

/*
 * Volumes on a real Docker Engine API (Podman's here), through the API and the app's own URL:
 * what the app writes survives every task change, a restart under continuous requests drops
 * none, another account can neither see nor mount nor delete a volume, a volume past its size
 * stops its container with the reason, and snapshots restore and download. One "GB" is 1 MiB
 * here (LOCAL_DISK_GB_BYTES, test only), measured every 300 ms.
 */
process.env.LOCAL_DISK_GB_BYTES = String(1024 * 1024);
process.env.LOCAL_DISK_CHECK_MS = '300';
// The first four journeys run together, each on its own volume and container; the restart under
// continuous requests runs alone after them, its hold timed against a stop and a start of its own.
// Four first starts at once on a busy machine take longer than the default start budget.
process.env.START_BUDGET_MS = '28000';

const engine = engineClient(inject('dockerHost'));
const execFileAsync = promisify(execFile);
const stack = useSignedInStack({ afterClose: () => removeStackVolumes(engine) });
let otherToken: string;

beforeAll(async () => {
  otherToken = await personalAccessToken(stack.baseUrl, await signedInUser(stack.baseUrl));
}, 60_000);

let counter = 0;
const uniqueHostname = () => `vo-${process.pid}-${(counter += 1)}`;
const { api } = stack;

/**
 * The app: busybox httpd with three CGI scripts over /data: `write?text` appends a line,
 * `read` answers the file, `fill?N` writes N MiB.
 */
const APP = cgiApp({
  ...NOTES_SCRIPTS,
  fill: 'dd if=/dev/zero of=/data/big bs=1048576 count=$QUERY_STRING 2>/dev/null; echo $?',
});

async function createVolume(name: string, sizeGb = 5, as?: string): Promise<Record<string, any>> {
  const response = await api('POST', '/api/v1/volumes', { name, size_gb: sizeGb }, as);
  expect(response.status, response.text).toBe(201);
  return response.body.data;
}

async function createApp(volumeId: string): Promise<Record<string, any>> {
  const response = await api('POST', '/api/v1/containers', {
    hostname: uniqueHostname(),
    image: TEST_IMAGE,
    port: 8080,
    command: APP,
    mounts: [{ volume: volumeId, path: '/data' }],
  });
  expect(response.status, response.text).toBe(200);
  return waitForState(response.body.data.id, 'running');
}

async function waitForState(id: string, state: string, timeoutMs = 30_000): Promise<Record<string, any>> {
  const last = await pollUntil(
    () => api('GET', `/api/v1/containers/${id}`),
    (response) => response.body.data?.state === state,
    timeoutMs,
  );
  expect(last.body.data.state, JSON.stringify(last.body.data)).toBe(state);
  return last.body.data;
}

const read = async (url: string) => (await appRequest(`${url}/cgi-bin/read`)).text;

describe('a volume on the engine', () => {
  it.concurrent('keeps what the app wrote through restart, PATCH and start, stop and start, and a move to another container', async () => {
    const volume = await createVolume('notes');
    const app = await createApp(volume.id);
    expect(app.mounts).toEqual([{ volume: volume.id, path: '/data' }]);
    expect((await appRequest(`${app.url}/cgi-bin/write?first`)).text).toBe('ok\n');

    const restarted = await api('POST', `/api/v1/containers/${app.id}/restart`);
    expect(restarted.status, restarted.text).toBe(200);
    expect(restarted.body.data.last_swap_ms).toBeGreaterThan(0);
    expect(await read(app.url)).toBe('first\n');

    await appRequest(`${app.url}/cgi-bin/write?second`);
    expect((await api('PATCH', `/api/v1/containers/${app.id}`, { env: { CHANGED: '1' } })).status).toBe(200);
    expect((await api('POST', `/api/v1/containers/${app.id}/start`)).status).toBe(200);
    expect(await read(app.url)).toBe('first\nsecond\n');

    expect((await api('POST', `/api/v1/containers/${app.id}/stop`)).status).toBe(200);
    expect((await api('POST', `/api/v1/containers/${app.id}/start`)).status).toBe(200);
    expect(await read(app.url)).toBe('first\nsecond\n');

    // Moved: the first container lets go of it (stopped), a new one mounts it.
    expect((await api('POST', `/api/v1/containers/${app.id}/stop`)).status).toBe(200);
    expect((await api('PATCH', `/api/v1/containers/${app.id}`, { mounts: [] })).status).toBe(200);
    const moved = await createApp(volume.id);
    expect(await read(moved.url)).toBe('first\nsecond\n');
    const engineVolume = await engine
      .getVolume(
        `container-hosting-${(await import('../../lib/wiring/local-containers.js')).stackIdOf(process.env.LOCAL_CONTAINER_DIR!)}-vol-${volume.id}`,
      )
      .inspect();
    expect(engineVolume.Labels).toMatchObject({ [VOLUME_LABEL.volume]: volume.id, [VOLUME_LABEL.sizeGb]: '5' });
  }, 180_000);

  it.concurrent("is another account's to neither see, mount nor delete", async () => {
    const volume = await createVolume('private');
    expect((await api('GET', `/api/v1/volumes/${volume.id}`, undefined, otherToken)).status).toBe(404);
    expect((await api('DELETE', `/api/v1/volumes/${volume.id}`, undefined, otherToken)).status).toBe(404);
    const mounted = await api(
      'POST',
      '/api/v1/containers',
      { hostname: uniqueHostname(), image: TEST_IMAGE, port: 8080, mounts: [{ volume: volume.id, path: '/data' }] },
      otherToken,
    );
    expect(mounted.status).toBe(404);
    expect((await api('GET', '/api/v1/volumes', undefined, otherToken)).body.data).toEqual([]);
    // Its owner still has it, unmounted.
    expect((await api('GET', `/api/v1/volumes/${volume.id}`)).body.data).toMatchObject({ attached_to: null });
  }, 60_000);

  it.concurrent('stops a container whose volume passes its size, naming the volume and its size', async () => {
    const volume = await createVolume('small', 1);
    const app = await createApp(volume.id);
    await appRequest(`${app.url}/cgi-bin/fill?3`).catch(() => undefined);
    const stopped = await pollUntil(
      () => api('GET', `/api/v1/containers/${app.id}`),
      (response) => response.body.data?.state !== 'running',
      20_000,
    );
    expect(stopped.body.data.state_reason).toBe(`volume ${volume.id} is over its size of 1 GB`);
    const measured = await pollUntil(
      () => api('GET', `/api/v1/volumes/${volume.id}`),
      (response) => response.body.data?.used_gb > 0,
      10_000,
    );
    expect(measured.body.data.used_gb).toBeGreaterThan(0);
  }, 90_000);

  it.concurrent('restores a snapshot into a new volume with the content at snapshot time, and downloads it as a gzipped tar', async () => {
    const volume = await createVolume('snapped');
    const app = await createApp(volume.id);
    await appRequest(`${app.url}/cgi-bin/write?before`);
    expect((await api('POST', `/api/v1/containers/${app.id}/stop`)).status).toBe(200);
    const taken = await api('POST', `/api/v1/volumes/${volume.id}/snapshots`);
    expect(taken.status, taken.text).toBe(200);
    // Its container is stopped: the copy is of one moment.
    expect(taken.body.data).toMatchObject({ consistent: true });
    const ready = await pollUntil(
      () => api('GET', `/api/v1/volumes/${volume.id}/snapshots`),
      (response) => response.body.data?.[0]?.state === 'ready',
      20_000,
    );
    const snapshot = ready.body.data[0];
    expect(snapshot.size_bytes).toBeGreaterThan(0);
    // Written after the snapshot: not in the restored volume.
    expect((await api('POST', `/api/v1/containers/${app.id}/start`)).status).toBe(200);
    await appRequest(`${app.url}/cgi-bin/write?after`);

    const restored = await api('POST', '/api/v1/volumes', { name: 'restored', size_gb: 5, from_snapshot: snapshot.id });
    expect(restored.status, restored.text).toBe(201);
    const second = await createApp(restored.body.data.id);
    expect(await read(second.url)).toBe('before\n');

    const link = await api('GET', `/api/v1/volumes/${volume.id}/snapshots/${snapshot.id}/download`);
    expect(link.status, link.text).toBe(200);
    const download = await fetch(link.body.data.url);
    expect(download.status).toBe(200);
    const directory = await mkdtemp(join(tmpdir(), 'snapshot-'));
    try {
      await writeFile(join(directory, 'snapshot.tar.gz'), Buffer.from(await download.arrayBuffer()));
      const { stdout } = await execFileAsync('tar', ['-xzOf', join(directory, 'snapshot.tar.gz'), 'notes']);
      expect(stdout).toBe('before\n');
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
    // Another account gets nothing of it, and a link that was tampered with is refused.
    expect((await api('GET', `/api/v1/volumes/${volume.id}/snapshots/${snapshot.id}/download`, undefined, otherToken)).status).toBe(404);
    expect((await fetch(link.body.data.url.replace(/signature=[^&]+/, 'signature=forged'))).status).toBe(403);
  }, 180_000);

  it('restarts a container with a volume under continuous requests without failing one, and holds them no longer than a stop and a start take', async () => {
    const volume = await createVolume('busy');
    const app = await createApp(volume.id);
    await appRequest(`${app.url}/cgi-bin/write?steady`);
    let sending = true;
    const failures: string[] = [];
    let answered = 0;
    const client = (async () => {
      while (sending) {
        const response = await appRequest(`${app.url}/cgi-bin/read`).catch((error: Error) => ({ status: 0, text: error.message }));
        if (response.status === 200 && response.text === 'steady\n') answered += 1;
        else failures.push(`${response.status} ${response.text.slice(0, 80)}`);
      }
    })();
    const restarts: number[] = [];
    for (let round = 0; round < 3; round += 1) {
      const restarted = await api('POST', `/api/v1/containers/${app.id}/restart`);
      expect(restarted.status, restarted.text).toBe(200);
      restarts.push(restarted.body.data.last_swap_ms);
    }
    sending = false;
    await client;
    expect(failures).toEqual([]);
    expect(answered).toBeGreaterThan(0);

    // A plain stop and start of the same container, in the same run, for comparison.
    const plain: number[] = [];
    for (let round = 0; round < 3; round += 1) {
      const startedAt = Date.now();
      expect((await api('POST', `/api/v1/containers/${app.id}/stop`)).status).toBe(200);
      expect((await api('POST', `/api/v1/containers/${app.id}/start`)).status).toBe(200);
      plain.push(Date.now() - startedAt);
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const ratio = median(restarts) / median(plain);
    console.log(
      `swap held ${restarts.join(', ')} ms (median ${median(restarts)}); stop+start ${plain.join(', ')} ms (median ${median(plain)}); ratio ${ratio.toFixed(2)}; load average ${loadavg()
        .map((load) => load.toFixed(2))
        .join(' ')}`,
    );
    // The goal is 1.2, measured on an idle machine and quoted in docs/containers.md; the suite asserts
    // no timing (issue 38 item 5): on a shared machine it only logs the figures.
    expect(ratio).toBeGreaterThan(0);
  }, 240_000);
});
