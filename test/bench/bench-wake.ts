/**
 * Benchmark of sleep and wake (issue 26) on Podman's Docker Engine API, against the bare engine
 * in the same run:
 *   npm run bench:wake            (DOCKER_HOST defaults to Podman's socket of this machine)
 *
 * 1. Wake: one container of the test image is put to sleep and woken WAKES times, each wake by
 *    CONCURRENT requests at once; its time is from sending them to the first 200. The bare
 *    engine's own, alternating with ours: the same stopped container, the engine container of the
 *    task that just slept (its image, spec, network and firewall rules), started with
 *    POST /containers/{id}/start and asked until its first 200.
 * 2. New container: POST /api/v1/containers to the first 200 at its URL, against the engine's
 *    create + start of the same container (its spec and its own network, as our runtime makes
 *    them, as `podman network create` and `podman run -d` would) to its first 200; NEW_RUNS each, with
 *    where our time goes (the POST's answer, the record turning running, the first 200).
 * Not part of npm test. Needs the test image (built by the engine tests: localhost/container-hosting-test/web:1).
 */
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { startEngineBenchStack } from '../support/engine-bench-stack.js';
import { percentile } from '../support/percentiles.js';
import type { TaskAddress } from '../../lib/local/task-book.js';
import { onItsBridge } from '../../lib/local/bridge-address.js';

const WAKES = Number(process.env.BENCH_WAKES ?? 20);
const CONCURRENT = 5;
const NEW_RUNS = Number(process.env.BENCH_NEW_RUNS ?? 10);
const IMAGE = 'localhost/container-hosting-test/web:1';
const POLL_MS = 5;

const stack = await startEngineBenchStack('bench-wake');
const { api, dockerHost, engine } = stack;
const { LABEL, engineNameOf } = await import('../../lib/local/docker-runtime.js');
const { engineContainerSpec } = await import('../../lib/local/engine-container-spec.js');
const { bridgeNameOf, ensureContainerNetwork } = await import('../../lib/local/engine-networks.js');

/** One GET through the stack's proxy (Host names the container) or straight to a task; answers the status, 0 for a connection error. */
function get(at: TaskAddress, host: string): Promise<number> {
  return new Promise((resolve) => {
    const outgoing = request({ host: at.host, port: at.port, path: '/', headers: { host }, agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
      response.on('error', () => resolve(0));
    });
    outgoing.on('error', () => resolve(0));
    outgoing.end();
  });
}

async function until200(at: TaskAddress, host: string, deadline = Date.now() + 60_000): Promise<void> {
  while ((await get(at, host)) !== 200) {
    if (Date.now() > deadline) throw new Error(`no 200 from ${host} within 60 s`);
    await sleep(POLL_MS);
  }
}

const stackAt: TaskAddress = { host: '127.0.0.1', port: Number(new URL(stack.baseUrl).port) };
const urlHost = (url: string) => new URL(url).host;

/**
 * The bare engine container: the same container our runtime creates for the same request (its
 * spec, from lib/local/engine-container-spec.ts, reached at its address as our runtime's tasks are, on a network of its own made with the same
 * options: the engine's isolation of it is part of the engine's start), created and started
 * past our runtime under a stack id of its own, which our runtime ignores.
 */
async function bareContainer(name: string) {
  const containerId = `bench-bare-${name}`;
  const networkName = await ensureContainerNetwork(engine, 'bench-bare', containerId);
  const container = await engine.createContainer(
    engineContainerSpec(
      `bench-bare`,
      `arn:local:ecs:local:000000000000:task/docker/${name}`,
      {
        containerId,
        hostname: name,
        image: IMAGE,
        port: 8080,
        env: {},
        command: null,
        cpuCores: 1,
        memoryMb: 512,
        diskGb: 18,
        healthCheck: null,
        mounts: [],
        clientToken: name,
      },
      networkName,
      'bridge',
    ),
  );
  return { network: engine.getNetwork(networkName), container, containerId };
}

/** Where the bare container (on the network of `containerId`) answers: its own address, as our runtime reaches its tasks on their bridge. */
async function addressOf(
  container: { inspect(): Promise<{ NetworkSettings: { Networks?: Record<string, { IPAddress: string }> } }> },
  containerId: string,
): Promise<TaskAddress> {
  const inspected = await container.inspect();
  const own = Object.values(inspected.NetworkSettings.Networks ?? {})[0]?.IPAddress ?? '';
  if (!onItsBridge(own, bridgeNameOf(containerId)))
    throw new Error(`the bare container's address (${own}) is not on a bridge of this machine: a rootful engine on Linux is needed`);
  return { host: own, port: 8080 };
}

// 1. Wake against the bare engine's start of a stopped container.
const { containerServiceOptions, containerStore } = await import('../../lib/wiring/containers.js');
const { localContainers } = await import('../../lib/wiring/local-containers.js');
const { SleepingContainerService } = await import('../../lib/containers/sleep-and-wake.js');
const { runtime, runPolicy, usage } = localContainers();
const service = new SleepingContainerService(containerStore, runtime, usage, containerServiceOptions({ runPolicy }));

const created = await api('POST', '/api/v1/containers', { hostname: `bench-wake-${process.pid}`, image: IMAGE, idle_timeout_s: 86_400 });
if (created.status !== 200) throw new Error(`create answered ${created.status}: ${created.text}`);
const sleeper = created.body.data as { id: string; url: string };
await until200(stackAt, urlHost(sleeper.url));
// The proxy sends requests to a task as soon as its runtime serves it, a moment before its record says running,
// and only a running container sleeps (as the idle sweep finds it).
for (const deadline = Date.now() + 15_000; (await containerStore.get(sleeper.id))?.state !== 'running'; await sleep(20)) {
  if (Date.now() > deadline) throw new Error('the container never turned running');
}

const wakeMs: number[] = [];
const wakeAllMs: number[] = [];
const recordedWakeMs: number[] = [];
const bareStartMs: number[] = [];
/** Where a wake's time goes: the engine container created, started, the record running (ms after the requests were sent). */
const phases = { created: [] as number[], started: [] as number[], running: [] as number[] };
let failed = 0;
/**
 * Puts the container to sleep; answers the engine container of the task that slept (stopped, as
 * the engine keeps it), once the runtime has made the next task's engine container ahead: that
 * work (a create, and on Podman an init) is the sleep's, and must not overlap the bare start.
 */
async function putToSleep() {
  const awake = (await containerStore.get(sleeper.id))!;
  await service.sleep(awake);
  // As after a real idle period, the slept task's engine container has exited before the wake.
  await sleep(1_000);
  const slept = engineNameOf(awake.taskArn!);
  for (const deadline = Date.now() + 15_000; Date.now() < deadline; await sleep(100)) {
    const listed = await engine.listContainers({ all: true, filters: { label: [`${LABEL.containerId}=${sleeper.id}`] } });
    const spare = listed.find((info) => !info.Names.some((name) => name.replace(/^\//, '') === slept) && info.State === 'created');
    // Initialized (Podman): its OCI runtime holds the process that waits to start (a nonzero pid).
    if (spare && (await engine.getContainer(spare.Id).inspect()).State.Pid !== 0) break;
  }
  return engine.getContainer(slept);
}
await putToSleep();
for (let round = 0; round < WAKES; round += 1) {
  const startedAt = performance.now();
  const sentAt = Date.now();
  let first = 0;
  const statuses = await Promise.all(
    Array.from({ length: CONCURRENT }, () =>
      get(stackAt, urlHost(sleeper.url)).then((status) => {
        if (status === 200 && !first) first = performance.now() - startedAt;
        return status;
      }),
    ),
  );
  wakeAllMs.push(performance.now() - startedAt);
  // When the record turned running, read once afterwards: reading the table every few ms during the
  // wake would load DynamoDB Local, on the same two cores, only while ours is timed.
  const woken = await containerStore.get(sleeper.id);
  if (woken?.state === 'running') phases.running.push(Date.parse(woken.updatedAt) - sentAt);
  const [newest] = (await engine.listContainers({ all: true, filters: { label: [`${LABEL.containerId}=${sleeper.id}`] } })).sort(
    (a, b) => b.Created - a.Created,
  );
  if (newest) {
    const inspected = await engine.getContainer(newest.Id).inspect();
    phases.created.push(Date.parse(inspected.Created) - sentAt);
    phases.started.push(Date.parse(inspected.State.StartedAt) - sentAt);
  }
  failed += statuses.filter((status) => status !== 200).length;
  wakeMs.push(first || Number.NaN);
  recordedWakeMs.push((await containerStore.get(sleeper.id))?.lastWakeMs ?? Number.NaN);

  // The bare engine's own start of the same stopped container: the engine container of the task
  // that just slept (its image, spec, network and firewall rules), started past our runtime, which
  // ignores it (its task is stopped), until its first 200 at its address, then stopped again.
  const slept = await putToSleep();
  const bareAt = performance.now();
  await slept.start();
  await until200(await addressOf(slept, sleeper.id), 'bare');
  bareStartMs.push(performance.now() - bareAt);
  await slept.stop({ t: 0 });
}
await api('DELETE', `/api/v1/containers/${sleeper.id}`);

// 2. A new container against create + start of the same image.
const newMs: number[] = [];
const newPostMs: number[] = [];
const newRunningMs: number[] = [];
const bareRunMs: number[] = [];
const newPhases = { created: [] as number[], started: [] as number[] };
/** The bare side's network and container created, and its start answered (ms after it began). */
const barePhases = { created: [] as number[], started: [] as number[] };
for (let run = 0; run < NEW_RUNS; run += 1) {
  const startedAt = performance.now();
  const sentAt = Date.now();
  const response = await api('POST', '/api/v1/containers', { hostname: `bench-new-${process.pid}-${run}`, image: IMAGE });
  if (response.status !== 200) throw new Error(`create answered ${response.status}: ${response.text}`);
  newPostMs.push(performance.now() - startedAt);
  const { id, url } = response.body.data as { id: string; url: string };
  await until200(stackAt, urlHost(url));
  newMs.push(performance.now() - startedAt);
  // As for a wake: the record's own time of turning running, read once, not polled while timed.
  const createdRecord = (await api('GET', `/api/v1/containers/${id}`)).body.data as { state?: string; updated_at?: string } | undefined;
  if (createdRecord?.state === 'running' && createdRecord.updated_at) newRunningMs.push(Date.parse(createdRecord.updated_at) - sentAt);
  const [engineContainer] = await engine.listContainers({ all: true, filters: { label: [`${LABEL.containerId}=${id}`] } });
  if (engineContainer) {
    const inspected = await engine.getContainer(engineContainer.Id).inspect();
    newPhases.created.push(Date.parse(inspected.Created) - sentAt);
    newPhases.started.push(Date.parse(inspected.State.StartedAt) - sentAt);
  }
  await api('DELETE', `/api/v1/containers/${id}`);

  const bareAt = performance.now();
  const fresh = await bareContainer(`${process.pid}x${run}`);
  barePhases.created.push(performance.now() - bareAt);
  await fresh.container.start();
  barePhases.started.push(performance.now() - bareAt);
  await until200(await addressOf(fresh.container, fresh.containerId), 'bare');
  bareRunMs.push(performance.now() - bareAt);
  await fresh.container.remove({ force: true });
  await fresh.network.remove().catch(() => undefined);
}

const row = (what: string, ours: number[], theirs: number[]) => {
  const [p50, p90, b50, b90] = [percentile(ours, 50), percentile(ours, 90), percentile(theirs, 50), percentile(theirs, 90)];
  return `| ${what} | ${p50.toFixed(0)} | ${p90.toFixed(0)} | ${b50.toFixed(0)} | ${b90.toFixed(0)} | ${(p50 / b50).toFixed(2)}× | ${(p90 / b90).toFixed(2)}× |`;
};
console.log(`\nSleep and wake on ${dockerHost}, ${WAKES} wakes of ${CONCURRENT} concurrent requests, ${NEW_RUNS} new containers (ms)\n`);
console.log('| measure | ours p50 | ours p90 | bare p50 | bare p90 | p50 ratio | p90 ratio |');
console.log('|---|---|---|---|---|---|---|');
console.log(row('wake: requests sent → first 200 (bare: start → first 200)', wakeMs, bareStartMs));
console.log(row('wake: all 5 answered', wakeAllMs, bareStartMs));
console.log(row('wake: last_wake_ms as recorded', recordedWakeMs, bareStartMs));
console.log(row('new container: POST → first 200 (bare: create + start → first 200)', newMs, bareRunMs));
console.log(
  `\nWake, ours p50 after the requests were sent: engine container created ${percentile(phases.created, 50)} ms (before 0: made ahead, at the sleep), started ${percentile(phases.started, 50)} ms, record running ${percentile(phases.running, 50).toFixed(0)} ms, first 200 ${percentile(wakeMs, 50).toFixed(0)} ms.`,
);
console.log(
  `Failed wake requests: ${failed} of ${WAKES * CONCURRENT}. New container, ours p50: POST answered ${percentile(newPostMs, 50).toFixed(0)} ms, engine container created ${percentile(newPhases.created, 50)} ms, started ${percentile(newPhases.started, 50)} ms, record running ${percentile(newRunningMs, 50).toFixed(0)} ms, first 200 ${percentile(newMs, 50).toFixed(0)} ms.`,
);
console.log(
  `New container, bare p50: network and container created ${percentile(barePhases.created, 50).toFixed(0)} ms, start answered ${percentile(barePhases.started, 50).toFixed(0)} ms, first 200 ${percentile(bareRunMs, 50).toFixed(0)} ms.`,
);

await stack.close();
process.exit(0);
