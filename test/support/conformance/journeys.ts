import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { pollUntil } from '../poll.js';
import { steadyRequests } from '../steady-requests.js';

/**
 * What a container's process does, whatever runs it: each runtime's harness turns this into
 * its own terms (SIM_* variables for the simulator's tasks and the process runtime, which run
 * test/support/aws-sim/task-app.mjs; a busybox script on the engine).
 */
export interface Behaviour {
  listenAfterMs?: number;
  neverListen?: boolean;
  exitAfterMs?: number;
  exitCode?: number;
  /** What `GET /healthz` answers. */
  healthStatus?: number;
  /** The runtime kills it for using too much memory after this long. */
  oomAfterMs?: number;
  body?: string;
}

/** A create request in the API's terms. */
export interface CreateInput {
  hostname: string;
  behaviour: Behaviour;
  /** Where the runtime lets it choose (the simulator runs the same app whatever the image). */
  image?: string;
  restart_policy?: 'never' | 'on-failure' | 'always';
  health_check?: { path: string; interval_s?: number; timeout_s?: number; grace_s?: number } | null;
  memory_mb?: number;
}

export interface Readout {
  state: string;
  state_reason: string | null;
  restart_count: number;
}

/** One runtime as the journeys drive it: through the API's operations and the app's URL, as a user would. */
export interface ConformanceHarness {
  create(input: CreateInput): Promise<string>;
  /** Undefined once the container is deleted. */
  read(id: string): Promise<Readout | undefined>;
  start(id: string): Promise<Readout>;
  stop(id: string): Promise<Readout>;
  restart(id: string): Promise<Readout>;
  remove(id: string): Promise<void>;
  /** One request to the app through its route (the proxy); the HTTP status, 0 when nothing answered. */
  answer(id: string): Promise<number>;
  /** Loses the RUNNING event of the next task of this hostname; absent where no event can be lost. */
  loseNextRunningEvent?(hostname: string): void;
  /** What the container left behind: live tasks or processes, routes, its record. */
  leftovers(id: string): Promise<string[]>;
  /** How long past its grace a lost event may leave a container unsettled (a reconcile interval). */
  settleMs: number;
  /** Its releases as the releases list answers them, newest first. */
  releases(id: string): Promise<Array<{ version: number; cause: string; env: Record<string, string> }>>;
  /** A PATCH of its environment (a new release). */
  setEnv(id: string, env: Record<string, string>): Promise<void>;
  /** A rollback to `version`: the status answered and the release the container then names. */
  rollback(id: string, version: number): Promise<{ status: number; release?: number }>;
  /**
   * A deploy of a context holding only a Dockerfile, uploaded as a client does and waited until it
   * settles: the status its create answered, and then its final state.
   */
  deploy(id: string, dockerfile: string): Promise<DeployReadout>;
}

export interface DeployReadout {
  status: number;
  state?: string;
  stateReason?: string | null;
  release?: number | null;
}

export const JOURNEYS = [
  'slow listener',
  'zero-downtime restart',
  'crash loop',
  'restart policy never',
  'out of memory',
  'failing health check',
  'lost RUNNING event',
  'delete leaves nothing',
  'releases and rollback',
  'deploy from source',
] as const;
export type Journey = (typeof JOURNEYS)[number];

/** Per runtime: a journey skipped (it cannot apply: the reason), or expected to fail until the named work lands. */
export type Verdicts = Partial<Record<Journey, { skip: string } | { fails: string }>>;

let counter = 0;
export const uniqueHostname = (prefix: string) => `${prefix}-${process.pid}-${(counter += 1)}`;

/** Polls the container, noting every time it read `running` while its app did not answer. */
async function watchRunningMeansAnswering(
  harness: ConformanceHarness,
  id: string,
  until: (r: Readout | undefined) => boolean,
  timeoutMs: number,
) {
  const silentWhileRunning: string[] = [];
  const last = await pollUntil(
    async () => {
      const readout = await harness.read(id);
      if (readout?.state === 'running') {
        const status = await harness.answer(id);
        if (status !== 200) silentWhileRunning.push(`running, but the app answered ${status}`);
      }
      return readout;
    },
    until,
    timeoutMs,
  );
  return { last, silentWhileRunning };
}

const CRASH: Behaviour = { exitAfterMs: 300, exitCode: 3 };

const journeys: Record<Journey, (harness: ConformanceHarness) => Promise<void>> = {
  async 'releases and rollback'(harness) {
    const id = await harness.create({ hostname: uniqueHostname('releases'), behaviour: { body: 'first' } });
    await pollUntil(
      () => harness.read(id),
      (r) => r?.state === 'running',
      60_000,
    );
    const [first] = await harness.releases(id);
    await harness.setEnv(id, { ...first!.env, SIM_BODY: 'second' });

    const rolledBack = await harness.rollback(id, first!.version);
    const releases = await harness.releases(id);
    const missing = await harness.rollback(id, 99);

    expect(first).toMatchObject({ version: 1, cause: 'create' });
    expect(rolledBack).toMatchObject({ status: 200, release: 3 });
    expect(releases.map(({ version, cause }) => `${version} ${cause}`)).toEqual(['3 rollback', '2 update', '1 create']);
    expect(releases[0]!.env).toEqual(first!.env);
    expect(releases[1]!.env.SIM_BODY).toBe('second');
    expect(missing.status).toBe(404);
    await harness.remove(id);
  },

  async 'deploy from source'(harness) {
    const id = await harness.create({ hostname: uniqueHostname('deploy'), behaviour: {} });
    await pollUntil(
      () => harness.read(id),
      (r) => r?.state === 'running',
      60_000,
    );

    const built = await harness.deploy(id, 'FROM scratch\n');
    const failing = await harness.deploy(id, 'FROM scratch\nRUN exit 3\n');
    const after = await harness.read(id);

    expect(built).toMatchObject({ status: 201, state: 'live', release: 2 });
    expect(failing).toMatchObject({ status: 201, state: 'failed' });
    expect(failing.stateReason).toMatch(/exit(ed with)? code 3|exit status 3|returned a non-zero code: 3/);
    expect(after?.state).toBe('running');
    expect((await harness.releases(id)).map(({ cause }) => cause)).toEqual(['deploy', 'create']);
    await harness.remove(id);
  },

  async 'slow listener'(harness) {
    const id = await harness.create({ hostname: uniqueHostname('slow'), behaviour: { listenAfterMs: 4000 } });
    const created = await watchRunningMeansAnswering(harness, id, (r) => r?.state === 'running' || r?.state === 'failed', 40_000);
    expect(created.last?.state).toBe('running');
    expect(created.silentWhileRunning).toEqual([]);
    await harness.stop(id);
    // A start answers `running` only once the app answers.
    const started = await harness.start(id);
    const status = await harness.answer(id);
    expect({ state: started.state, status }).toEqual({ state: 'running', status: 200 });
    await harness.remove(id);
  },

  async 'zero-downtime restart'(harness) {
    const id = await harness.create({ hostname: uniqueHostname('zdr'), behaviour: { listenAfterMs: 3000 } });
    // Running, not only answering: on AWS the route goes up just before the container turns running, and a
    // restart of a container still provisioning stops its task first (docs/containers.md, "Restart").
    await pollUntil(
      async () => ({ state: (await harness.read(id))?.state, status: await harness.answer(id) }),
      ({ state, status }) => state === 'running' && status === 200,
      40_000,
    );
    // The app GET every 50 ms until stopped.
    const client = steadyRequests(() => harness.answer(id));
    await sleep(300);
    await harness.restart(id);
    await pollUntil(
      () => harness.read(id),
      (r) => r?.state === 'running',
      40_000,
    );
    await sleep(1500);
    const statuses = await client.stop();
    expect(statuses.length).toBeGreaterThan(10);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    await harness.remove(id);
  },

  async 'crash loop'(harness) {
    const startedAt = Date.now();
    const id = await harness.create({ hostname: uniqueHostname('loop'), behaviour: CRASH, restart_policy: 'on-failure' });
    const failed = await pollUntil(
      () => harness.read(id),
      (r) => r?.state === 'failed' && r.restart_count >= 5,
      90_000,
    );
    expect(failed).toMatchObject({ state: 'failed', state_reason: 'exited with code 3', restart_count: 5 });
    // The backoff alone is 1+2+4+8+16 s.
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(31_000);
    await sleep(2500);
    expect(await harness.read(id)).toMatchObject({ state: 'failed', restart_count: 5 });
    await harness.remove(id);
  },

  async 'restart policy never'(harness) {
    const id = await harness.create({ hostname: uniqueHostname('never'), behaviour: CRASH, restart_policy: 'never' });
    const failed = await pollUntil(
      () => harness.read(id),
      (r) => r?.state === 'failed',
      30_000,
    );
    expect(failed).toMatchObject({ state: 'failed', state_reason: 'exited with code 3', restart_count: 0 });
    await sleep(2000);
    expect(await harness.read(id)).toMatchObject({ state: 'failed', restart_count: 0 });
    await harness.remove(id);
  },

  async 'out of memory'(harness) {
    const id = await harness.create({
      hostname: uniqueHostname('oom'),
      behaviour: { oomAfterMs: 1500 },
      restart_policy: 'never',
      memory_mb: 512,
    });
    const failed = await pollUntil(
      () => harness.read(id),
      (r) => r?.state === 'failed',
      40_000,
    );
    expect(failed?.state).toBe('failed');
    expect(failed?.state_reason).toMatch(/out of memory/);
    await harness.remove(id);
  },

  async 'failing health check'(harness) {
    const id = await harness.create({
      hostname: uniqueHostname('unhealthy'),
      behaviour: { healthStatus: 500 },
      health_check: { path: '/healthz', interval_s: 1, timeout_s: 1, grace_s: 4 },
      restart_policy: 'never',
    });
    const watched = await watchRunningMeansAnswering(harness, id, (r) => r?.state === 'failed', 40_000);
    expect(watched.last?.state).toBe('failed');
    expect(watched.last?.state_reason).toMatch(/^(not ready within 4 s|health check failed)/);
    // 500 where the app answers what it is told; busybox httpd (the engine's test image) answers 404 for a missing page.
    expect(watched.last?.state_reason).toMatch(/answered (500|404)/);
    await harness.remove(id);
  },

  async 'lost RUNNING event'(harness) {
    const hostname = uniqueHostname('lost');
    harness.loseNextRunningEvent!(hostname);
    const id = await harness.create({ hostname, behaviour: {}, health_check: { path: '/healthz', grace_s: 5 } });
    // Within the grace plus a reconcile interval the container reads what its task is.
    const settled = await pollUntil(
      () => harness.read(id),
      (r) => r?.state === 'running',
      5_000 + harness.settleMs + 10_000,
    );
    expect(settled?.state).toBe('running');
    expect(await harness.answer(id)).toBe(200);
    await harness.remove(id);
  },

  async 'delete leaves nothing'(harness) {
    const id = await harness.create({ hostname: uniqueHostname('del'), behaviour: {} });
    await pollUntil(
      () => harness.read(id),
      (r) => r?.state === 'running',
      40_000,
    );
    await harness.remove(id);
    const left = await pollUntil(
      () => harness.leftovers(id),
      (items) => items.length === 0,
      15_000,
    );
    expect(left).toEqual([]);
  },
};

/**
 * The same journeys over one runtime, concurrently (the file takes about as long as the crash
 * loop's backoff). A skip or an expected failure carries its reason in the test's name.
 * `maxConcurrent` bounds how many run at once, for a runtime whose every task start is costly
 * (each Podman container gets a network of its own, under one engine-wide lock); a journey's
 * time waiting for its turn does not count against its own waits, only against the test's timeout.
 */
export function describeConformance(
  runtime: string,
  harness: () => ConformanceHarness,
  verdicts: Verdicts = {},
  { maxConcurrent = JOURNEYS.length }: { maxConcurrent?: number } = {},
): void {
  const turns = new Turns(maxConcurrent);
  describe.concurrent(`runtime conformance: ${runtime}`, () => {
    for (const journey of JOURNEYS) {
      const verdict = verdicts[journey];
      const options = { timeout: maxConcurrent < JOURNEYS.length ? 300_000 : 120_000 };
      const run = () => turns.take(() => journeys[journey](harness()));
      if (verdict && 'skip' in verdict) it.skip(`${journey} (skipped: ${verdict.skip})`, options, () => {});
      // CONFORMANCE_SHOW_FAILURES=1 runs them as plain tests, to see how each fails.
      else if (verdict && 'fails' in verdict && !process.env.CONFORMANCE_SHOW_FAILURES)
        it.fails(`${journey} (expected to fail: ${verdict.fails})`, options, run);
      else it(journey, options, run);
    }
  });
}

/** At most `size` bodies at once; the rest wait in order. */
class Turns {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly size: number) {}

  async take<T>(body: () => Promise<T>): Promise<T> {
    if (this.running >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running += 1;
    try {
      return await body();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}
