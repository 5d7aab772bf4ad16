/**
 * Benchmark of a deploy from source (issue 33, "Done means": deploy → live against `podman build`
 * plus `podman run` of the same context, goal at most 1.3×) on Podman's Docker Engine API:
 *   npm run bench:deploy          (DOCKER_HOST defaults to Podman's socket of this machine)
 *
 * RUNS times, alternating: ours, a deploy of a running container (POST …/deploys, the PUT of the
 * context, to the moment the deploy went live: its own `finished_at`), and the engine's own,
 * `POST /build` of the same context then create + start of its image until its first 200 (asked
 * every 20 ms, straight to its port; once more with nothing published, reached at its address as
 * ours reaches its tasks), and, where Podman's client is installed, the issue's own
 * wording of it: `podman build` then `podman run` of the context directory with Podman's client
 * on the same engine, which adds the client's start and its own round trips; against it, ours as
 * a person types it too: `container-hosting deploy DIR`, from the CLI's start to its exit once the
 * deploy is live (client to client). Ours through the API is read every
 * 250 ms, not timed by its reads (the CLI reads a deploy every 100 ms, every 50 ms once deploying), and a read every 20 ms (a
 * credential and two items each, 150 DynamoDB Local calls a second) took the cores the engine's
 * build and start need, so the bench slowed what it measured (docs/measurements.md, "Deploy →
 * live"). Each context differs (its index.html), so no side reuses another's build. Where our time goes comes,
 * in BENCH_WATCHED_RUNS more deploys that are not timed (watching slows them), from the engine's events (the image built, the new task's container made, initialized and
 * started, the old one stopped; the account's build network is made ahead, as the upload URL is
 * issued, and outlives the build) and the deploy's own timestamps.
 * Not part of npm test. Needs the test image (built by the engine tests: localhost/container-hosting-test/web:1).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { buildCli } from '../../scripts/build-cli.js';
import { engineBuildAndRun, podmanCliBuildAndRun } from '../support/engine-build-and-run.js';
import { startEngineBenchStack } from '../support/engine-bench-stack.js';
import { median } from '../support/percentiles.js';
import { pollUntil } from '../support/poll.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
/** Deploys watched for the breakdown after the timed runs (their own times are not counted). */
const WATCHED_RUNS = Number(process.env.BENCH_WATCHED_RUNS ?? 3);
const IMAGE = 'localhost/container-hosting-test/web:1';
const POLL_MS = 20;
/** How often a deploy's state is read while it goes live (the CLI: every 100 ms, every 50 ms once deploying, for 5 s). */
const DEPLOY_READ_MS = 250;
/**
 * How long after a deploy went live the next measurement waits: the old task's drain and stop
 * (Podman's stop took 340 ms and held the engine's lock on it meanwhile) and the retention's
 * image list run after `live`, and the baselines remove what they made before the next one.
 */
const SETTLE_MS = 1500;

const stack = await startEngineBenchStack('bench-deploy', { role: 'admin' });
// Built from cli/src, as `npm ci` builds it, so the bench never runs a CLI older than its source.
const cli = buildCli();
const execFileAsync = promisify(execFile);
const { api, dockerHost, engine } = stack;
const { packBuildContext } = await import('../../cli/src/build-context.js');
const dirs: string[] = [];

async function contextServing(content: string): Promise<Buffer> {
  return packBuildContext(await contextDirServing(content));
}

/** A context directory whose Dockerfile serves `content` (removed at the end). */
async function contextDirServing(content: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-deploy-context-'));
  dirs.push(dir);
  await writeFile(join(dir, 'Dockerfile'), `FROM ${IMAGE}\nUSER 0:0\nCOPY index.html /www/index.html\nUSER 65534:65534\n`);
  await writeFile(join(dir, 'index.html'), `${content}\n`);
  return dir;
}

/** Reads every POLL_MS until `done` holds, for 2 minutes at the most. */
const poll = <T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 120_000): Promise<T> =>
  pollUntil(read, done, timeoutMs, POLL_MS);

interface EngineEvent {
  Type?: string;
  Action?: string;
  Actor?: { ID?: string; Attributes?: Record<string, string> };
  timeNano?: number;
}

/** The engine's events from now on, each with the wall-clock ms it happened at. */
async function recordEvents(): Promise<{ events: Array<EngineEvent & { at: number }>; stop(): void }> {
  const events: Array<EngineEvent & { at: number }> = [];
  const stream = (await engine.getEvents({ since: Math.floor(Date.now() / 1000) - 1 })) as NodeJS.ReadableStream & { destroy(): void };
  let buffer = '';
  stream.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let newline = buffer.indexOf('\n');
    while (newline >= 0) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      if (line) {
        const event = JSON.parse(line) as EngineEvent;
        events.push({ ...event, at: (event.timeNano ?? 0) / 1e6 });
      }
      newline = buffer.indexOf('\n');
    }
  });
  return { events, stop: () => stream.destroy() };
}

const hostname = `bench-deploy-${process.pid}`;
const created = await api('POST', '/api/v1/containers', { hostname, image: IMAGE, port: 8080 });
if (created.status !== 200) throw new Error(JSON.stringify(created.body));
const containerId: string = created.body.data.id;
await poll(
  () => api('GET', `/api/v1/containers/${containerId}`),
  (response) => response.body.data?.state === 'running',
);

type Phases = Record<string, number>;
const oursMs: number[] = [];
const baseline: number[] = [];
/** The engine's own, its app reached at its address with no port published, as our runtime reaches its tasks (EngineReach). */
const baselineAtAddress: number[] = [];
const cliBaseline: number[] = [];
const oursCliMs: number[] = [];
const breakdowns: Phases[] = [];

/**
 * One deploy through the API. `watched`: with the engine's events recorded, for where its time
 * goes; a run watched is not timed, since watching slows it: Podman serves the events stream by
 * tailing its events file, and the timed runs took 575 ms unwatched against 643 ms watched
 * (2026-11-29 22:29 and 22:31), while the baseline, never watched, took the same (404, 414).
 */
async function deployOnce(run: number, watched = false): Promise<void> {
  const context = await contextServing(`ours ${run} ${Date.now()}`);
  const recorder = watched ? await recordEvents() : undefined;
  const startedAt = Date.now();
  const t0 = performance.now();
  const posted = await api('POST', `/api/v1/containers/${containerId}/deploys`, { size_bytes: context.length });
  if (posted.status !== 201) throw new Error(JSON.stringify(posted.body));
  const postMs = performance.now() - t0;
  const { upload, id } = posted.body.data;
  const put = await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: context });
  if (put.status !== 200) throw new Error(await put.text());
  const putMs = performance.now() - t0;
  const final = await pollUntil(
    () => api('GET', `/api/v1/containers/${containerId}/deploys/${id}`),
    (response) => ['live', 'failed', 'superseded'].includes(response.body.data?.state),
    120_000,
    DEPLOY_READ_MS,
  );
  const seenMs = performance.now() - t0;
  if (final.body.data.state !== 'live') throw new Error(`deploy ${final.body.data.state}: ${final.body.data.state_reason}`);
  // The stack's clock is this process's: finished_at is when the deploy's live write was made.
  const totalMs = Date.parse(final.body.data.finished_at) - startedAt;
  // The engine's events of this deploy arrive meanwhile, too.
  await sleep(SETTLE_MS);
  recorder?.stop();
  if (!recorder) {
    oursMs.push(totalMs);
    return;
  }
  const since = (at: number | undefined) => (at === undefined ? Number.NaN : at - startedAt);
  // This deploy's: the engine serves other stacks too (their events are someone else's time).
  const ours = (event: EngineEvent) =>
    event.Type !== 'container' || event.Actor?.Attributes?.['container-hosting.container-id'] === containerId;
  const first = (match: (event: EngineEvent) => boolean) =>
    recorder.events.find((event) => event.at >= startedAt && ours(event) && match(event))?.at;
  // Podman tells a build's end as `build` (its image's id only); Docker tags the image with the deploy's id.
  const built = first(
    (event) =>
      event.Type === 'image' &&
      (event.Action === 'build' || (event.Action === 'tag' && (event.Actor?.Attributes?.name ?? '').includes(id))),
  );
  const taskMade = first((event) => event.Type === 'container' && event.Action === 'create');
  // Podman's: its init (network, filesystem, OCI container) ahead of a start, or within it.
  const taskInitialized = first((event) => event.Type === 'container' && event.Action === 'init');
  const taskStarted = first((event) => event.Type === 'container' && event.Action === 'start');
  const oldStopped = first((event) => event.Type === 'container' && ['kill', 'stop', 'died', 'die'].includes(event.Action ?? ''));
  breakdowns.push({
    'POST answered': postMs,
    'upload answered (the build started)': putMs,
    'image built': since(built),
    'new task container made': since(taskMade),
    'new task container initialized': since(taskInitialized),
    'new task container started': since(taskStarted),
    'deploy finished_at (live)': totalMs,
    [`client saw live (read every ${DEPLOY_READ_MS} ms)`]: seenMs,
    'old task stopped (drain end)': since(oldStopped),
  });
}

/** Ours as a person types it: `container-hosting deploy DIR --container NAME`, from its start to its exit (live). */
async function cliDeployOnce(run: number): Promise<void> {
  const dir = await contextDirServing(`ours through the CLI ${run} ${Date.now()}`);
  const startedAt = performance.now();
  const { stdout } = await execFileAsync(process.execPath, [cli, 'deploy', dir, '--container', hostname], {
    env: { PATH: process.env.PATH!, HOME: tmpdir(), CONTAINER_HOSTING_API: stack.baseUrl, CONTAINER_HOSTING_TOKEN: stack.token },
  });
  oursCliMs.push(performance.now() - startedAt);
  if (!stdout.includes(hostname)) throw new Error(`the CLI's deploy printed ${stdout}`);
  await sleep(SETTLE_MS);
}

/** As issue 33 words the baseline: Podman's own client, `podman build` then `podman run`, on the same engine. */
async function cliBaselineOnce(run: number): Promise<void> {
  const dir = await contextDirServing(`cli ${run} ${Date.now()}`);
  const ms = await podmanCliBuildAndRun(dockerHost, dir, `localhost/deploy-bench-cli/${process.pid}:${run}`, POLL_MS);
  if (ms !== undefined) cliBaseline.push(ms);
}

async function baselineOnce(run: number, atItsAddress = false): Promise<void> {
  const context = await contextServing(`baseline ${run} ${atItsAddress} ${Date.now()}`);
  const tag = `localhost/deploy-bench/${process.pid}:${run}${atItsAddress ? 'a' : ''}`;
  const { ms, container } = await engineBuildAndRun(engine, context, tag, POLL_MS, atItsAddress);
  (atItsAddress ? baselineAtAddress : baseline).push(ms);
  await container.remove({ force: true });
  await engine
    .getImage(tag)
    .remove({ force: true })
    .catch(() => undefined);
}

for (let run = 0; run < RUNS; run += 1) {
  await baselineOnce(run);
  await baselineOnce(run, true);
  await cliBaselineOnce(run);
  await cliDeployOnce(run);
  await deployOnce(run);
}
for (let run = 0; run < WATCHED_RUNS; run += 1) await deployOnce(RUNS + run, true);

console.log(`\nDeploy → live on ${dockerHost}, ${RUNS} runs each (ms, median)\n`);
console.log('| measure | ms |');
console.log('|---|---|');
console.log(`| ours: POST …/deploys → the deploy went live (its finished_at) | ${median(oursMs).toFixed(0)} |`);
console.log(`| baseline: engine build + create + start → first 200 | ${median(baseline).toFixed(0)} |`);
console.log(`| ratio | ${(median(oursMs) / median(baseline)).toFixed(2)}× |`);
console.log(
  `| baseline, its app reached at its address, no port published (as ours reaches its tasks) | ${median(baselineAtAddress).toFixed(0)} |`,
);
console.log(`| ratio against it | ${(median(oursMs) / median(baselineAtAddress)).toFixed(2)}× |`);
if (cliBaseline.length > 0) {
  console.log(`| clients: ours, \`container-hosting deploy\` from its start to its exit (live) | ${median(oursCliMs).toFixed(0)} |`);
  console.log(`| clients: \`podman build\` + \`podman run\` (Podman's client) → first 200 | ${median(cliBaseline).toFixed(0)} |`);
  console.log(`| ratio, client to client | ${(median(oursCliMs) / median(cliBaseline)).toFixed(2)}× |`);
}
console.log(
  `\nWhere ours goes, in ${WATCHED_RUNS} more deploys watched through the engine's events, which slows them (ms after the POST was sent, median; NaN where the engine reported no such event):\n`,
);
for (const phase of Object.keys(breakdowns[0] ?? {})) {
  console.log(`- ${phase}: ${median(breakdowns.map((breakdown) => breakdown[phase]!)).toFixed(0)}`);
}
console.log(
  `\nEvery run, ours: ${oursMs.map((ms) => ms.toFixed(0)).join(', ')}; baseline: ${baseline.map((ms) => ms.toFixed(0)).join(', ')}; at its address: ${baselineAtAddress.map((ms) => ms.toFixed(0)).join(', ')}; Podman's client: ${cliBaseline.map((ms) => ms.toFixed(0)).join(', ')}`,
);

await api('DELETE', `/api/v1/containers/${containerId}`);
await stack.close();
await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
process.exit(0);
