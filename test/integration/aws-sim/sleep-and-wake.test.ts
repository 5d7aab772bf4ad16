import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { accessLogActivityFunction, wakeFunction } from '../../../infra/event-functions.js';
import type { LogsSubscriptionEvent } from '../../../lib/aws/access-log-activity.js';
import { config } from '../../../lib/config.js';
import type { StoredContainer } from '../../../lib/containers/container.js';
import type { ContainerService } from '../../../lib/containers/container-service.js';
import { runShutdown } from '../../../lib/local/lifecycle.js';
import { RECONCILE_FUNCTION_ID, runningFunction } from '../../../lib/local/running-function.js';
import { containerRuntime } from '../../../lib/wiring/container-runtime.js';
import { containerServiceWith, containerStore } from '../../../lib/wiring/containers.js';
import { deferredWork } from '../../../lib/wiring/deferred-work.js';
import { idleSweepWith } from '../../../lib/wiring/sleeping-containers.js';
import { answerWakeRequest } from '../../../lib/aws/wake-endpoint.js';
import { wakeEndpointWith } from '../../../lib/wiring/wake.js';
import { caddyLine, logsDelivery } from '../../support/access-log-delivery.js';
import { type AwsSim, simPortFor, startAwsSim } from '../../support/aws-sim/index.js';
import { type EcsSimStack, SIM_ROUTE53 } from '../../support/conformance/ecs-harness.js';
import { wiredEcsSimStack } from '../../support/conformance/wired-ecs-stack.js';
import { serveFunctionUrl } from '../../support/function-url.js';
import { pollUntil } from '../../support/poll.js';

/*
 * Issue 26 item 6 on the AWS simulator: a container with idle_timeout_s 30 on the simulated ECS,
 * its idleness from the proxy's access log delivered through the access-log function's handler,
 * put to sleep by the AWS reconcile function's idle sweep, then woken by requests to the wake
 * function's handler behind a function URL over real HTTP, as Caddy sends them
 * (infra/proxy/Caddyfile). The real SDK clients reach the simulator; the task state and probe
 * functions' handlers run from their queues, and the probe is the real TCP probe of the task's
 * own loopback address. The sweep is given a clock, so 30 s and more of silence take no time.
 */
await vi.hoisted(async () => {
  const { ecsSimSettings } = await import('../../support/ecs-settings.js');
  Object.assign(
    process.env,
    ecsSimSettings({
      APPS_DOMAIN: 'apps.example.com',
      WAKE_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:wake-AbCdEf',
    }),
  );
});

const SECRET = 'Zq8wake0secret0for0the0proxy0only0Xy12';
const DOMAIN = 'apps.example.com';

let sim: AwsSim;
let stack: EcsSimStack;
let service: ContainerService;
let secrets: Server;
let secretReads = 0;
let wakeUrl: { url: string; close(): Promise<void> };
let deliverAccessLog: (event: LogsSubscriptionEvent) => Promise<void>;

// An invocation of the access-log function with all of its deployed timeout ahead of it.
const lambdaContext = {
  awsRequestId: 'test',
  functionName: accessLogActivityFunction.id,
  getRemainingTimeInMillis: () => accessLogActivityFunction.timeoutSeconds * 1000,
} as unknown as Context;

beforeAll(async () => {
  // Secrets Manager's GetSecretValue (awsJson1_1), for the wake function's one read of its secret.
  secrets = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      secretReads += 1;
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      response.end(JSON.stringify({ ARN: config.WAKE_SECRET_ARN, Name: 'wake', SecretString: SECRET, VersionStages: ['AWSCURRENT'] }));
    });
  });
  await new Promise<void>((resolve) => secrets.listen(0, '127.0.0.1', resolve));
  process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = `http://127.0.0.1:${(secrets.address() as AddressInfo).port}`;
  sim = await startAwsSim({
    port: simPortFor(process.pid),
    seed: 26,
    // The simulator's own PROVISIONING and PENDING (each start here waited 0.9 s on average with [200, 500] and
    // [300, 800]): what a wake holds is timed against the readiness probe and the budget, not against ECS's start.
    ecs: { provisioningMs: [50, 150], pendingMs: [100, 300], stopTimeoutMs: 2000 },
    route53: SIM_ROUTE53,
  });
  // The simulator serves Secrets Manager too (registry credentials) and points the SDK at itself: the wake secret is this file's.
  process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = `http://127.0.0.1:${(secrets.address() as AddressInfo).port}`;
  service = containerServiceWith({ runtime: containerRuntime, deferredWork });
  stack = wiredEcsSimStack(sim, service);
  // The functions' own modules, each run as its function (the table access recorder checks their grants).
  const wake = await import('../../../functions/containers/wake.js');
  const accessLog = await import('../../../functions/containers/access-log-activity.js');
  wakeUrl = await serveFunctionUrl(
    (event, context) => runningFunction.run(wakeFunction.id, () => wake.handler(event, context)),
    wakeFunction.timeoutSeconds * 1000,
  );
  deliverAccessLog = (event) => runningFunction.run(accessLogActivityFunction.id, () => accessLog.handler(event, lambdaContext));
}, 30_000);

afterAll(async () => {
  await wakeUrl?.close();
  await stack?.close();
  await sim?.close();
  await new Promise((resolve) => secrets?.close(resolve));
  await runShutdown();
});

/** The AWS reconcile function's idle sweep (functions/containers/reconcile.ts), at `clock`. */
const sweepAt = (clock: number) =>
  runningFunction.run(RECONCILE_FUNCTION_ID, () => idleSweepWith(containerRuntime, deferredWork, undefined, () => clock)());

async function createRunning(hostname: string, idleTimeoutS: number | null, env: Record<string, string> = {}): Promise<StoredContainer> {
  const created = await service.create(stack.caller, {
    hostname,
    image: 'sim/app:1',
    port: 8080,
    env: { SIM_BODY: `the app ${hostname} answered`, ...env },
    command: null,
    cpuCores: 1,
    memoryMb: 2048,
    diskGb: 20,
    healthCheck: null,
    restartPolicy: 'on-failure',
    idleTimeoutS,
  });
  const running = await pollUntil(
    () => containerStore.get(created.id),
    (container) => container?.state === 'running',
    20_000,
  );
  expect(running?.state).toBe('running');
  return running!;
}

/** A request as Caddy's handle_errors sends it to the wake endpoint. */
async function viaWake(hostname: string, headers: Record<string, string> = { 'x-wake-secret': SECRET }) {
  const response = await fetch(`${wakeUrl.url}/hello?from=test`, {
    headers: { 'x-wake-host': `${hostname}.${DOMAIN}`, 'x-wake-forwarded-for': '203.0.113.9', ...headers },
    signal: AbortSignal.timeout(60_000),
  });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

/** The proxy's own cache of answered SRV names (infra/proxy/Caddyfile, `refresh 5s`); a failed lookup is not cached. */
const PROXY_REFRESH_MS = 5_000;
const proxyAnswers = new Map<string, { values: string[]; until: number }>();

/**
 * A request as a proxy task routes it (infra/proxy/Caddyfile): the SRV record of the hostname,
 * looked up through the VPC's resolver and its cache, names the task's port and the target whose A
 * record is its address; no record sends the request to the wake endpoint instead.
 */
async function viaProxy(hostname: string): Promise<{ via: 'task' | 'wake'; status: number; body: string }> {
  const name = `_http._tcp.${hostname}.${SIM_ROUTE53.zoneName}`;
  let answer = proxyAnswers.get(name);
  if (!answer || answer.until <= Date.now()) {
    const resolved = sim.resolver.resolve(name, 'SRV');
    answer = { values: resolved.values, until: Date.now() + PROXY_REFRESH_MS };
    if (resolved.values.length > 0) proxyAnswers.set(name, answer);
    else proxyAnswers.delete(name);
  }
  const srv = /^0 0 (\d+) (\S+?)\.?$/.exec(answer.values[0] ?? '');
  const address = srv ? sim.resolver.resolve(srv[2]!, 'A').values[0] : undefined;
  if (!srv || !address) {
    const woken = await viaWake(hostname);
    return { via: 'wake', status: woken.status, body: woken.body };
  }
  const response = await fetch(`http://${address}:${srv[1]}/hello`, { headers: { host: `${hostname}.${DOMAIN}` } });
  return { via: 'task', status: response.status, body: await response.text() };
}

/**
 * Counts the wake function's DescribeTasks calls while `act` runs (the reconciler describes tasks
 * every few seconds too, through the same runtime).
 */
async function wakeDescribesDuring<T>(act: (count: () => number) => Promise<T>): Promise<{ result: T; describes: number }> {
  const describe = containerRuntime.describeTasks.bind(containerRuntime);
  let describes = 0;
  const spy = vi.spyOn(containerRuntime, 'describeTasks').mockImplementation((taskArns) => {
    if (runningFunction.getStore() === wakeFunction.id) describes += 1;
    return describe(taskArns);
  });
  try {
    return { result: await act(() => describes), describes };
  } finally {
    spy.mockRestore();
  }
}

const tasksOf = (containerId: string) => [...sim.ecs.tasks.values()].filter((task) => task.startedBy === containerId);
const routesOf = (hostname: string) => sim.route53.routes().filter((route) => route.hostname === hostname);

describe('sleep and wake on the AWS simulator', () => {
  let sleepy: StoredContainer;

  it('keeps a container with idle_timeout_s 30 awake while the access log shows requests, and puts it to sleep once they stop', async () => {
    // Prepare
    sleepy = await createRunning('sleepy', 30);
    expect(routesOf('sleepy')).toHaveLength(1);
    expect((await containerStore.usageOf(stack.caller.userId)).runningCpu).toBe(1);
    const t0 = Date.now();
    const request = (offsetMs: number) => deliverAccessLog(logsDelivery([{ message: caddyLine(`sleepy.${DOMAIN}`, t0 + offsetMs) }]));
    // Act: requests at t0, t0 + 20 s and t0 + 40 s as the proxy's log lines say (the table is written
    // once a minute, so it knows only t0), then at t0 + 61 s; sweeps at the clocks given.
    await request(0);
    await request(20_000);
    await request(40_000);
    const recorded = (await containerStore.get(sleepy.id))?.lastRequestAt;
    // 45 s after the written request but 5 s after the last one: still in use.
    const sleptAt45 = await sweepAt(t0 + 45_000);
    const stillRunning = (await containerStore.get(sleepy.id))?.state;
    await deliverAccessLog(
      logsDelivery([{ message: caddyLine(`sleepy.${DOMAIN}`, t0 + 61_000) }, { message: caddyLine('other.example.org', t0) }]),
    );
    const recordedAgain = (await containerStore.get(sleepy.id))?.lastRequestAt;
    // Its timeout (30 s) plus the flush minute after the last write it could know of.
    const sleptLater = await sweepAt(t0 + 61_000 + 30_000 + 60_000 + 1_000);
    // Assess
    expect(recorded).toBe(t0);
    expect(recordedAgain).toBe(t0 + 61_000);
    expect([sleptAt45, stillRunning]).toEqual([0, 'running']);
    expect(sleptLater).toBe(1);
    const asleep = await containerStore.get(sleepy.id);
    expect([asleep?.state, asleep?.stateReason]).toEqual(['stopped', 'idle']);
    expect((await containerStore.usageOf(stack.caller.userId)).runningCpu).toBe(0);
    // Its task stops, and the task state function withdraws its route; the stop does not rename the sleep.
    await pollUntil(
      async () => routesOf('sleepy').length,
      (count) => count === 0,
      15_000,
    );
    expect(routesOf('sleepy')).toEqual([]);
    expect(tasksOf(sleepy.id).map((task) => task.desiredStatus)).toEqual(['STOPPED']);
    const after = await containerStore.get(sleepy.id);
    expect([after?.state, after?.stateReason]).toEqual(['stopped', 'idle']);
  }, 60_000);

  it('answers 5 concurrent requests through the wake endpoint with the app’s own answer, after exactly one RunTask', async () => {
    // Prepare
    expect(sleepy).toBeDefined();
    const tasksBefore = tasksOf(sleepy.id).length;
    const startedAt = Date.now();
    // Act
    const answers = await Promise.all(Array.from({ length: 5 }, () => viaWake('sleepy')));
    const tookMs = Date.now() - startedAt;
    // Assess
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    expect(answers.map((answer) => answer.body)).toEqual(Array(5).fill('the app sleepy answered'));
    expect(tasksOf(sleepy.id)).toHaveLength(tasksBefore + 1);
    const woken = await containerStore.get(sleepy.id);
    expect(woken?.state).toBe('running');
    expect(woken?.lastWakeMs).toBeGreaterThan(0);
    expect(woken?.lastWakeMs).toBeLessThanOrEqual(tookMs);
    expect((await containerStore.usageOf(stack.caller.userId)).runningCpu).toBe(1);
    expect(secretReads).toBe(1);
    console.log(
      `Simulator wake: 5 concurrent requests answered 200 in ${tookMs} ms; last_wake_ms ${woken?.lastWakeMs}; ` +
        `RunTask calls for the container ${tasksOf(sleepy.id).length - tasksBefore}; route ${JSON.stringify(routesOf('sleepy').map((route) => route.ip))}`,
    );
  }, 60_000);

  it('reaches a woken app’s task through the proxy’s DNS within seconds of the wake, with DescribeTasks calls bounded', async () => {
    // Prepare: a container asleep, its route withdrawn.
    const dozy = await createRunning('dozy', 30);
    await sweepAt(Date.now() + 10 * 60_000);
    await pollUntil(
      async () => routesOf('dozy').length,
      (count) => count === 0,
      15_000,
    );
    expect((await containerStore.get(dozy.id))?.stateReason).toBe('idle');
    // Act: one request every 200 ms through the proxy; the first finds no record (the resolver
    // caches that for the zone's negative TTL) and wakes the container.
    const answers: Array<{ via: 'task' | 'wake'; status: number; at: number; describes: number }> = [];
    const startedAt = Date.now();
    const deadline = startedAt + 30_000;
    await wakeDescribesDuring(async (describeCalls) => {
      while (Date.now() < deadline && answers.filter((answer) => answer.via === 'task').length < 3) {
        const answer = await viaProxy('dozy');
        answers.push({ via: answer.via, status: answer.status, at: Date.now(), describes: describeCalls() });
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    });
    // Assess
    const woke = answers[0]!;
    const firstDirect = answers.find((answer) => answer.via === 'task');
    const throughWakeAfter = answers.filter((answer) => answer.via === 'wake' && answer !== woke);
    const describesAfterWake = (firstDirect ?? answers.at(-1)!).describes - woke.describes;
    console.log(
      `Simulator wake through the resolver (negative TTL ${sim.resolver.negativeTtlSeconds()} s): woken in ${woke.at - startedAt} ms; ` +
        `first request to the task ${firstDirect ? `${firstDirect.at - woke.at} ms after the wake's answer` : 'never'}; ` +
        `${throughWakeAfter.length} requests through the wake function meanwhile, DescribeTasks calls ${describesAfterWake}`,
    );
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    expect(woke.via).toBe('wake');
    expect(firstDirect).toBeDefined();
    expect(firstDirect!.at - woke.at).toBeLessThanOrEqual(10_000);
    // The wake function's DescribeTasks per container is cached: at most one more call, however many requests.
    expect(describesAfterWake).toBeLessThanOrEqual(1);
  }, 60_000);

  it('forwards 20 requests for a running container that reach the wake endpoint with at most one DescribeTasks', async () => {
    // Prepare: running, as when a proxy's resolver still remembers that its route was absent.
    const awake = await createRunning('awake', null);
    // Act
    const { result: answers, describes } = await wakeDescribesDuring(() => Promise.all(Array.from({ length: 20 }, () => viaWake('awake'))));
    // Assess
    expect(answers.map((answer) => answer.body)).toEqual(Array(20).fill('the app awake answered'));
    expect(describes).toBeLessThanOrEqual(1);
    expect(tasksOf(awake.id)).toHaveLength(1);
    console.log(`Simulator: 20 requests to a running container through the wake endpoint, DescribeTasks calls ${describes}`);
  }, 60_000);

  it('holds at most its bound of requests for one wake: the rest get the starting page at once, and one RunTask starts it', async () => {
    // Prepare: asleep, and a wake endpoint wired as the function is but holding at most 2 requests per container.
    const crowd = await createRunning('crowd', 30);
    await sweepAt(Date.now() + 10 * 60_000);
    expect((await containerStore.get(crowd.id))?.stateReason).toBe('idle');
    const tasksBefore = tasksOf(crowd.id).length;
    const endpoint = wakeEndpointWith({
      runtime: containerRuntime,
      deferredWork,
      appsDomain: DOMAIN,
      budgetMs: 60_000,
      secret: async () => SECRET,
      holdLimits: { perContainer: 2, overall: 1_000 },
    });
    const bounded = await serveFunctionUrl(
      (event, context) =>
        runningFunction.run(wakeFunction.id, () =>
          answerWakeRequest(event, endpoint, Date.now() + context.getRemainingTimeInMillis() - 3_000),
        ),
      wakeFunction.timeoutSeconds * 1000,
    );
    try {
      // Act
      const answers = await Promise.all(
        Array.from({ length: 6 }, async () => {
          const sentAt = Date.now();
          const response = await fetch(`${bounded.url}/`, {
            headers: { 'x-wake-secret': SECRET, 'x-wake-host': `crowd.${DOMAIN}`, accept: 'application/json' },
          });
          return { status: response.status, body: await response.text(), ms: Date.now() - sentAt };
        }),
      );
      // Assess
      const app = answers.filter((answer) => answer.status === 200);
      const starting = answers.filter((answer) => answer.status === 503);
      expect(app.map((answer) => answer.body)).toEqual(['the app crowd answered', 'the app crowd answered']);
      expect(starting.map((answer) => answer.body)).toEqual(Array(4).fill('crowd is starting; ask again in 2 s\n'));
      expect(Math.max(...starting.map((answer) => answer.ms))).toBeLessThan(Math.min(...app.map((answer) => answer.ms)));
      expect(tasksOf(crowd.id)).toHaveLength(tasksBefore + 1);
      console.log(
        `Simulator wake with 2 holds per container: 6 requests, 200 after ${app.map((answer) => answer.ms).join(', ')} ms, ` +
          `503 starting after ${starting.map((answer) => answer.ms).join(', ')} ms; RunTask calls ${tasksOf(crowd.id).length - tasksBefore}`,
      );
    } finally {
      await bounded.close();
    }
  }, 90_000);

  it('never wakes a container stopped on request: the 503 page, and no task', async () => {
    // Prepare
    const halted = await createRunning('halted', 30);
    await service.stop(stack.caller, halted.id);
    const tasksBefore = tasksOf(halted.id).length;
    // Act
    const answer = await viaWake('halted');
    // Assess
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('10');
    expect(answer.body).toContain('This app is not running');
    expect(tasksOf(halted.id)).toHaveLength(tasksBefore);
    const after = await containerStore.get(halted.id);
    expect([after?.state, after?.stateReason]).toEqual(['stopped', 'stopped on request']);
  }, 60_000);

  it('answers a browser held past the budget the self-reloading starting page, then the app once it is ready', async () => {
    // Prepare: an app that listens 2 s after its start (past the budget, and ready by the readiness probe's
    // look 4 s after RUNNING: with 4 s it missed that look and waited for the one at 8 s), asleep; a wake
    // endpoint wired as the function is (lib/wiring/wake.ts) but with a 1.5 s budget.
    const slow = await createRunning('slowpoke', 30, { SIM_LISTEN_AFTER_MS: '2000' });
    await sweepAt(Date.now() + 10 * 60_000);
    expect((await containerStore.get(slow.id))?.stateReason).toBe('idle');
    const endpoint = wakeEndpointWith({
      runtime: containerRuntime,
      deferredWork,
      appsDomain: DOMAIN,
      budgetMs: 1_500,
      secret: async () => SECRET,
    });
    const shortBudget = await serveFunctionUrl(
      (event, context) =>
        runningFunction.run(wakeFunction.id, () =>
          answerWakeRequest(event, endpoint, Date.now() + context.getRemainingTimeInMillis() - 3_000),
        ),
      wakeFunction.timeoutSeconds * 1000,
    );
    const fromBrowser = () =>
      fetch(`${shortBudget.url}/`, {
        headers: { 'x-wake-secret': SECRET, 'x-wake-host': `slowpoke.${DOMAIN}`, accept: 'text/html,application/xhtml+xml' },
      }).then(async (response) => ({
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        body: await response.text(),
      }));
    try {
      // Act
      const first = await fromBrowser();
      const reloads: number[] = [];
      const last = await pollUntil(
        async () => {
          const answer = await fromBrowser();
          reloads.push(answer.status);
          return answer;
        },
        (answer) => answer.status === 200,
        30_000,
      );
      // Assess
      expect(first.status).toBe(503);
      expect(first.retryAfter).toBe('2');
      expect(first.body).toContain('slowpoke is starting');
      expect(first.body).toContain('<meta http-equiv="refresh" content="2">');
      expect(last?.body).toBe('the app slowpoke answered');
      expect(tasksOf(slow.id).filter((task) => task.desiredStatus === 'RUNNING')).toHaveLength(1);
      console.log(`Simulator wake past a 1.5 s budget: first answer ${first.status} (starting page), then ${reloads.join(', ')}`);
    } finally {
      await shortBudget.close();
    }
  }, 60_000);

  it('answers 403 to a caller without the wake secret, and wakes nothing', async () => {
    // Prepare: asleep again.
    await sweepAt(Date.now() + 10 * 60_000);
    expect((await containerStore.get(sleepy.id))?.stateReason).toBe('idle');
    const tasksBefore = tasksOf(sleepy.id).length;
    // Act
    const without = await viaWake('sleepy', {});
    const wrong = await viaWake('sleepy', { 'x-wake-secret': `${SECRET}0` });
    // Assess
    for (const answer of [without, wrong]) {
      expect(answer.status).toBe(403);
      expect(JSON.parse(answer.body)).toEqual({ error: { code: 'FORBIDDEN', message: 'Only the proxy may call the wake endpoint' } });
    }
    expect(tasksOf(sleepy.id)).toHaveLength(tasksBefore);
  }, 30_000);
});
