import { describe, expect, inject, it, vi } from 'vitest';
import { engineClient } from '../../lib/local/docker-engine.js';
import { appRequest } from '../support/app-request.js';
import { TEST_IMAGE } from '../support/global-engine.js';
import { cgiApp, NOTES_SCRIPTS, removeStackVolumes } from '../support/engine-volumes.js';
import { useSignedInStack } from '../support/local-stack.js';
import { pollUntil } from '../support/poll.js';
import { sleepNow } from '../support/sleepers.js';

/*
 * A volume's data through what a container goes through without its owner asking (issue 34,
 * item 4), on a real Docker Engine API (Podman's here): a sleep and the wake of the next request,
 * and a crash that its restart policy restarts. And one writer (item 3): a wake right after a
 * sleep starts the new task only once the old one has exited, shown by an app that takes a lock
 * file with O_EXCL at start, notes any lock it finds held, and gives the lock back as it exits.
 * Each sleeper is put to sleep as the idle sweep does, without waiting out its 30 s of idleness:
 * when a container falls asleep is test/engine/sleep-and-wake.test.ts's; what its volume keeps is this file's.
 */
vi.hoisted(() => Object.assign(process.env, { RECONCILE_INTERVAL_MS: '500', START_BUDGET_MS: '28000' }));

const engine = engineClient(inject('dockerHost'));
const stack = useSignedInStack({ afterClose: () => removeStackVolumes(engine) });

let counter = 0;
const uniqueHostname = () => `vs-${process.pid}-${(counter += 1)}`;
const { api, container: read } = stack;

/**
 * busybox httpd over /data: `write?text` appends a line to notes, `read` answers them,
 * `overlaps` answers what starts found the lock held, `crash` makes the app exit 3 (a failure, which
 * its restart policy restarts). At start it takes /data/lock with O_EXCL (the shell's
 * noclobber); on SIGTERM it takes `exitDelayS` seconds to finish, as an app that flushes does,
 * then gives the lock back.
 */
const app = (exitDelayS: number): string[] =>
  cgiApp(
    { ...NOTES_SCRIPTS, overlaps: 'cat /data/overlaps 2>/dev/null; echo end', crash: 'kill -USR1 1; echo bye' },
    {
      atStart: ['if ! (set -C; echo $$ > /data/lock) 2>/dev/null; then echo "held at $(date +%s)" >> /data/overlaps; fi'],
      traps: [
        `trap 'sleep ${exitDelayS}; rm -f /data/lock; exit 0' TERM`,
        // PID 1 gets only the signals it handles: the crash is an exit with a failure's status.
        "trap 'rm -f /data/lock; exit 3' USR1",
      ],
    },
  );

async function volumeApp(name: string, body: Record<string, unknown>): Promise<{ id: string; url: string; volumeId: string }> {
  const volume = await api('POST', '/api/v1/volumes', { name, size_gb: 1 });
  expect(volume.status, volume.text).toBe(201);
  const created = await api('POST', '/api/v1/containers', {
    hostname: uniqueHostname(),
    image: TEST_IMAGE,
    port: 8080,
    mounts: [{ volume: volume.body.data.id, path: '/data' }],
    ...body,
  });
  expect(created.status, created.text).toBe(200);
  const { id, url } = created.body.data;
  const running = await pollUntil(
    () => read(id),
    (container) => container.state === 'running',
    30_000,
  );
  expect(running.state).toBe('running');
  return { id, url, volumeId: volume.body.data.id };
}

const fetchText = async (url: string) => (await appRequest(url)).text;

/** How long the one-writer journey's old task takes to exit after SIGTERM. */
const OLD_TASK_EXIT_S = 4;

describe.concurrent('a volume through sleep, wake and a crash', () => {
  it('keeps what the app wrote through a sleep and the wake of the next request', async ({ expect }) => {
    const { id, url } = await volumeApp('slept', { idle_timeout_s: 30, command: app(0) });
    expect(await fetchText(`${url}/cgi-bin/write?before-sleep`)).toBe('ok\n');

    await sleepNow(id);
    const asleep = await pollUntil(
      () => read(id),
      (container) => container.state !== 'running',
      50_000,
    );
    expect(asleep).toMatchObject({ state: 'stopped', state_reason: 'idle' });

    expect(await fetchText(`${url}/cgi-bin/read`)).toBe('before-sleep\n');
    expect(await read(id)).toMatchObject({ state: 'running', last_wake_ms: expect.any(Number) });
  }, 120_000);

  it('wakes right after a sleep only once the old task has exited: the two never hold the volume together', async ({ expect }) => {
    // The old task takes 4 s (OLD_TASK_EXIT_S) to exit after SIGTERM, within the engine's stop grace of 10 s; the wake
    // below comes at once, well before that (it was 9 s: the wake waited 9.8 s, the test took 11.5 s).
    const { id, url } = await volumeApp('one-writer', { idle_timeout_s: 30, command: app(OLD_TASK_EXIT_S) });
    expect(await fetchText(`${url}/cgi-bin/write?kept`)).toBe('ok\n');

    // Not waited for: the sleep ends once the old task has exited, and the wake below comes before that.
    const sleeping = sleepNow(id);
    const asleep = await pollUntil(
      () => read(id),
      (container) => container.state !== 'running',
      50_000,
    );
    expect(asleep).toMatchObject({ state: 'stopped', state_reason: 'idle' });
    // At once: the old task is still finishing.
    const wokenAt = Date.now();
    expect(await fetchText(`${url}/cgi-bin/read`)).toBe('kept\n');
    console.info(`woke ${Date.now() - wokenAt} ms after the request, the old task taking ${OLD_TASK_EXIT_S} s to exit`);

    expect(await fetchText(`${url}/cgi-bin/overlaps`)).toBe('end\n');
    await sleeping;
  }, 120_000);

  it('keeps what the app wrote through a crash that its restart policy restarts', async ({ expect }) => {
    const { id, url } = await volumeApp('crashed', { restart_policy: 'on-failure', command: app(0) });
    expect(await fetchText(`${url}/cgi-bin/write?before-crash`)).toBe('ok\n');
    await appRequest(`${url}/cgi-bin/crash`).catch(() => undefined);

    const restarted = await pollUntil(
      () => read(id),
      (container) => container.state === 'running' && container.restart_count >= 1,
      60_000,
    );
    expect(restarted, JSON.stringify(restarted)).toMatchObject({ state: 'running', restart_count: 1 });
    expect(await fetchText(`${url}/cgi-bin/read`)).toBe('before-crash\n');
  }, 120_000);
});
