import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it, vi } from 'vitest';
import { engineClient } from '../../lib/local/docker-engine.js';
import { LABEL } from '../../lib/local/docker-runtime.js';
import type { ApiResponse } from '../support/api-client.js';
import { appRequest } from '../support/app-request.js';
import { TEST_IMAGE } from '../support/global-engine.js';
import { useSignedInStack } from '../support/local-stack.js';
import { pollUntil } from '../support/poll.js';

/*
 * Journeys over HTTP against the local stack on a real Docker Engine API (Podman's here): the
 * container's image runs, isolated, with its env, command, limits, logs and metrics.
 */
// The first describe's journeys run together, their starts with them: on a busy machine five
// concurrent first starts take longer than the default budget, which no test here is about.
vi.hoisted(() => Object.assign(process.env, { START_BUDGET_MS: '28000' }));
const engine = engineClient(inject('dockerHost'));
// The stack's own environment holds a secret a container must never see.
process.env.SERVICE_ONLY_SECRET = 'must-not-leak';
const stack = useSignedInStack();

let counter = 0;
const uniqueHostname = () => `en-${process.pid}-${(counter += 1)}`;
const { api } = stack;

/** A shell command run as the container's CMD; PID 1 traps SIGTERM so a stop is quick. */
const shell = (script: string): string[] => ['sh', '-c', `trap 'exit 0' TERM; ${script} & wait`];
const SERVE = 'httpd -f -p $PORT -h /www';

async function create(body: Record<string, unknown>): Promise<ApiResponse> {
  const response = await api('POST', '/api/v1/containers', { hostname: uniqueHostname(), image: TEST_IMAGE, port: 8080, ...body });
  expect(response.status).toBe(200);
  return response;
}

async function waitForState(id: string, state: string, timeoutMs = 20_000): Promise<Record<string, any>> {
  const last = await pollUntil(
    () => api('GET', `/api/v1/containers/${id}`),
    (response) => response.body.data?.state === state,
    timeoutMs,
  );
  expect(last.body.data.state).toBe(state);
  return last.body.data;
}

const engineContainersOf = (containerId: string) =>
  engine.listContainers({ all: true, filters: { label: [`${LABEL.containerId}=${containerId}`] } });

describe.concurrent('a container on the engine', () => {
  it("runs its image: the file the image serves answers at the container's url", async () => {
    const created = await create({});
    const running = await waitForState(created.body.data.id, 'running');

    const page = await appRequest(running.url);

    expect(page.status).toBe(200);
    expect(page.text).toBe('served from the image\n');
    const [engineContainer] = await engineContainersOf(created.body.data.id);
    expect(engineContainer?.Image).toBe(TEST_IMAGE);
  });

  it('gets its env plus PORT and CONTAINER_HOSTNAME, runs its command, and keeps stdout and stderr apart', async () => {
    const created = await create({
      env: { GREETING: 'hello from env' },
      command: shell(`echo "greeting=$GREETING port=$PORT host=$CONTAINER_HOSTNAME"; echo "a line on stderr" >&2; ${SERVE}`),
    });
    const { id, hostname } = created.body.data;
    await waitForState(id, 'running');

    const logs = await pollUntil(
      () => api('GET', `/api/v1/containers/${id}/logs`),
      (response) => response.body.data?.length >= 2,
    );

    expect(logs.body.data).toEqual([
      { timestamp: expect.any(String), stream: 'stdout', message: `greeting=hello from env port=8080 host=${hostname}` },
      { timestamp: expect.any(String), stream: 'stderr', message: 'a line on stderr' },
    ]);
  });

  it('reports its memory use and writable layer from the engine', async () => {
    const created = await create({ command: shell(`head -c 2000000 /dev/zero > /tmp/filler; ${SERVE}`) });
    await waitForState(created.body.data.id, 'running');

    const metrics = await api('GET', `/api/v1/containers/${created.body.data.id}/metrics`);

    expect(metrics.status).toBe(200);
    expect(metrics.body.data.memory_used_mb).toBeGreaterThan(0);
    expect(metrics.body.data.disk_used_gb).toBeGreaterThan(1_900_000 / 1024 ** 3);
    expect(Date.parse(metrics.body.data.sampled_at)).toBeGreaterThan(Date.now() - 10_000);
  });

  it('is running exactly when it answers: a server that listens after 3 s answers the moment start returns', async () => {
    // 3 s (it was 4 s): longer than the engine takes to report the container running, which is when a start that did not
    // wait for an answer returned.
    const created = await create({ command: shell(`sleep 3; ${SERVE}`) });
    const { id, url } = created.body.data;
    await waitForState(id, 'running');
    expect((await api('POST', `/api/v1/containers/${id}/stop`)).body.data.state).toBe('stopped');

    const startedAt = Date.now();
    const started = await api('POST', `/api/v1/containers/${id}/start`);
    const tookMs = Date.now() - startedAt;
    const page = await appRequest(url);

    expect(started.body.data?.state, JSON.stringify(started.body)).toBe('running');
    expect(tookMs).toBeGreaterThanOrEqual(3000);
    expect(page.status).toBe(200);
  });

  it('fails when its image is missing, saying which image', async () => {
    const image = 'localhost/container-hosting-test/missing:1';
    // restart_policy never: under the default on-failure the pull is retried (1, 2, 4, 8, 16 s) before the container fails.
    const created = await create({ image, restart_policy: 'never' });
    const failed = await waitForState(created.body.data.id, 'failed');

    expect(failed.state_reason).toMatch(/^image pull failed: localhost\/container-hosting-test\/missing:1: /);
  });

  it('fails saying it ran out of memory when its main process outgrows memory_mb', async () => {
    // Serves (so it is running), then the main process becomes a dd whose 700 MB buffer
    // passes the 512 MB limit, with no swap to spill into.
    const created = await create({
      cpu_cores: 1,
      memory_mb: 512,
      restart_policy: 'never',
      command: ['sh', '-c', 'httpd -p $PORT -h /www; sleep 1; exec dd if=/dev/zero of=/dev/null bs=700M count=1'],
    });
    const { id } = created.body.data;
    await waitForState(id, 'running');

    const failed = await waitForState(id, 'failed');

    // Docker marks the OOM kill itself; Podman 4.3 reports only the SIGKILL's exit code 137.
    expect(failed.state_reason).toMatch(
      /^(out of memory \(limit 512 MB\)|killed \(exit code 137: most likely out of memory, limit 512 MB\))$/,
    );
    const [engineContainer] = await engine.listContainers({ all: true, filters: { label: [`${LABEL.containerId}=${id}`] } });
    expect((await engine.getContainer(engineContainer!.Id).inspect()).HostConfig.Memory).toBe(512 * 1024 * 1024);
  });

  it('leaves nothing in the engine once deleted', async () => {
    const created = await create({});
    const { id } = created.body.data;
    await waitForState(id, 'running');
    expect(await engineContainersOf(id)).toHaveLength(1);

    expect((await api('DELETE', `/api/v1/containers/${id}`)).status).toBe(200);

    expect(await engineContainersOf(id)).toEqual([]);
  });
});

describe('isolation on the engine', () => {
  it("cannot read the service's environment or data directory, nor another container's files or logs", async () => {
    const victim = await create({ command: shell(`echo victim-secret > /tmp/victim-secret; echo victim-log-secret; ${SERVE}`) });
    await waitForState(victim.body.data.id, 'running');
    const probes = [
      'echo "service-secret-in-env=$(env | grep -c must-not-leak)"',
      `echo "server-environ=$(cat /proc/${process.pid}/environ 2>&1 | head -c 200)"`,
      `echo "data-dir=$(ls ${process.env.LOCAL_CONTAINER_DIR} 2>&1)"`,
      'echo "other-file=$(cat /tmp/victim-secret 2>&1)"',
      // Where the engine keeps every container's log file (Podman; Docker's is /var/lib/docker).
      'echo "engine-store=$(ls /var/lib/containers /var/lib/docker 2>&1)"',
      'echo "processes=$(ls /proc | grep -c "^[0-9]")"',
    ];
    const prober = await create({ command: shell(`${probes.join('; ')}; ${SERVE}`) });
    await waitForState(prober.body.data.id, 'running');

    const logs = await pollUntil(
      () => api('GET', `/api/v1/containers/${prober.body.data.id}/logs`),
      (response) => response.body.data?.length >= probes.length,
    );
    const said = Object.fromEntries(
      logs.body.data.map((line: { message: string }) => [line.message.split('=')[0], line.message.slice(line.message.indexOf('=') + 1)]),
    );

    expect(said['service-secret-in-env']).toBe('0');
    expect(said['server-environ']).toMatch(/No such file or directory/);
    expect(said['data-dir']).toMatch(/No such file or directory/);
    expect(said['other-file']).toMatch(/No such file or directory/);
    expect(said['engine-store']).toMatch(/No such file or directory/);
    // Its own shell, the server, and what the probes ran: none of the machine's processes.
    expect(Number(said.processes)).toBeLessThan(10);
  });
});

/** Builds `tag` from the test image with another index.html, as a developer rebuilding their app under the same tag. */
async function buildOver(tag: string, page: string): Promise<void> {
  const context = await mkdtemp(join(tmpdir(), 'engine-rebuild-'));
  try {
    await writeFile(join(context, 'Containerfile'), `FROM ${TEST_IMAGE}\nUSER 0\nRUN echo '${page}' > /www/index.html\nUSER 65534:65534\n`);
    const progress = await engine.buildImage({ context, src: ['Containerfile'] }, { t: tag, dockerfile: 'Containerfile' });
    await new Promise<void>((resolve, reject) =>
      engine.modem.followProgress(progress, (error: Error | null) => (error ? reject(error) : resolve())),
    );
  } finally {
    await rm(context, { recursive: true, force: true });
  }
}

/** A stopped container's next task is made ahead (lib/local/spare-engine-containers.ts): waits until it is, so the start takes that path. */
async function preparedTaskOf(containerId: string): Promise<void> {
  const prepared = (listed: Awaited<ReturnType<typeof engineContainersOf>>) => listed.some((info) => info.State === 'created');
  expect(prepared(await pollUntil(() => engineContainersOf(containerId), prepared, 10_000))).toBe(true);
}

describe('a container started again after a stop', () => {
  it('runs what its image tag names now, not what it named at the stop, and leaves nothing once deleted', async () => {
    const tag = `localhost/container-hosting-test/rebuilt-${process.pid}:1`;
    await engine.getImage(TEST_IMAGE).tag({ repo: tag.slice(0, tag.lastIndexOf(':')), tag: '1' });
    try {
      const { id } = (await create({ image: tag })).body.data;
      const running = await waitForState(id, 'running');
      expect((await appRequest(running.url)).text).toBe('served from the image\n');
      expect((await api('POST', `/api/v1/containers/${id}/stop`)).status).toBe(200);
      await preparedTaskOf(id);

      await buildOver(tag, 'rebuilt');
      expect((await api('POST', `/api/v1/containers/${id}/start`)).status).toBe(200);

      expect((await appRequest(running.url)).text).toBe('rebuilt\n');
      expect((await api('DELETE', `/api/v1/containers/${id}`)).status).toBe(200);
      expect(await engineContainersOf(id)).toEqual([]);
    } finally {
      await engine
        .getImage(tag)
        .remove({ force: true })
        .catch(() => undefined);
    }
  });

  it('runs its changed workload when it was changed while stopped', async () => {
    const serveGreeting = shell('mkdir -p /tmp/www && echo $GREETING > /tmp/www/index.html && httpd -f -p $PORT -h /tmp/www');
    const { id } = (await create({ command: serveGreeting, env: { GREETING: 'first' } })).body.data;
    const running = await waitForState(id, 'running');
    expect((await appRequest(running.url)).text).toBe('first\n');
    expect((await api('POST', `/api/v1/containers/${id}/stop`)).status).toBe(200);
    await preparedTaskOf(id);

    expect((await api('PATCH', `/api/v1/containers/${id}`, { env: { GREETING: 'second' } })).status).toBe(200);
    expect((await api('POST', `/api/v1/containers/${id}/start`)).status).toBe(200);

    expect((await appRequest(running.url)).text).toBe('second\n');
  });
});
