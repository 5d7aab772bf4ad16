import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { config } from '../../../lib/config.js';
import { log } from '../../../lib/log.js';
import { containerRuntime } from '../../../lib/wiring/container-runtime.js';
import { containerServiceWith } from '../../../lib/wiring/containers.js';
import { deferredWork } from '../../../lib/wiring/deferred-work.js';
import { reconcilerWith } from '../../../lib/wiring/reconciler.js';
import { type RouteChangeMessage, routeWriterWith } from '../../../lib/wiring/route-writer.js';
import { taskMessageHandlersWith } from '../../../lib/wiring/task-events.js';
import { type AwsSim, simPortFor, startAwsSim } from '../../support/aws-sim/index.js';
import type { SimTask } from '../../support/aws-sim/ecs.js';
import { EcsSimStack, onOneInstance, SIM_ROUTE53 } from '../../support/conformance/ecs-harness.js';
import type { ConformanceHarness } from '../../support/conformance/journeys.js';
import { uniqueHostname } from '../../support/conformance/journeys.js';
import { closeEcsSim } from '../../support/conformance/wired-ecs-stack.js';
import { pollUntil } from '../../support/poll.js';
import { steadyRequests } from '../../support/steady-requests.js';

/*
 * A zero-downtime restart on the ECS model (the AWS simulator: Route 53 with its throttle, SQS
 * standard queues with delays and no order, the reconciler every 3 s) whose route writer lags:
 * every batch of route changes waits 3 s before it is written, as a backlog or Route 53's
 * throttling makes it on a busy account; or it never writes a withdrawal. The old task must stop
 * only once its route is out of the zone, and at the latest after the retire's bound.
 */
await vi.hoisted(async () => {
  const { ecsSimSettings } = await import('../../support/ecs-settings.js');
  Object.assign(process.env, ecsSimSettings());
});

/** The bound of this stack's retires (RETIRE_ROUTES_MAX_WAIT_MS is 5 minutes): long next to the writer's lag. */
const MAX_WAIT_MS = 15_000;

let writerLagMs = 0;
let writerRefusesWithdrawals = false;
let sim: AwsSim;
let stack: EcsSimStack;
let harness: ConformanceHarness;

beforeAll(async () => {
  expect(config.CONTAINER_RUNTIME).toBe('ecs');
  sim = await startAwsSim({
    port: simPortFor(process.pid),
    seed: 7,
    // The simulator's own PROVISIONING and PENDING (they were [200, 600] and [300, 1200]): the file times the
    // route writer's lag against the retire's bound, not ECS's start.
    ecs: { provisioningMs: [50, 150], pendingMs: [100, 300], stopTimeoutMs: 2000 },
    route53: { ...SIM_ROUTE53, requestsPerSecond: { capacity: 50, refillPerSecond: 10 } },
  });
  const service = containerServiceWith({ runtime: containerRuntime, deferredWork });
  const handlers = taskMessageHandlersWith(containerRuntime, deferredWork, { retireRoutesMaxWaitMs: MAX_WAIT_MS });
  const { write } = routeWriterWith();
  // The writer as a lagging account sees it: each batch late, or its withdrawals handed back to the queue unwritten.
  const laggingWrite = async (messages: RouteChangeMessage[]) => {
    await sleep(writerLagMs);
    if (!writerRefusesWithdrawals) return write(messages);
    const refused = messages.filter(({ body }) => (JSON.parse(body) as { kind?: string }).kind === 'withdraw');
    const outcome = await write(messages.filter((message) => !refused.includes(message)));
    return { ...outcome, failedMessageIds: [...outcome.failedMessageIds, ...refused.map(({ messageId }) => messageId)] };
  };
  stack = new EcsSimStack({
    sim,
    service,
    reconciler: reconcilerWith(containerRuntime, config, deferredWork),
    taskStateInvocation: onOneInstance(handlers.taskEvent),
    probeInvocation: onOneInstance(handlers.probe),
    writeRoutes: laggingWrite,
  });
  harness = stack.harness();
});

afterAll(() => closeEcsSim(stack, sim));

const runningTaskOf = (containerId: string): SimTask =>
  [...sim.ecs.tasks.values()].find((task) => task.startedBy === containerId && task.desiredStatus === 'RUNNING')!;
const routed = (task: SimTask) => sim.route53.routes().some((route) => route.taskId === task.taskId);

/**
 * A container running and answering through its route, and its task: its route goes up before
 * it turns running, and a restart of a container still provisioning stops its task first.
 */
async function answering(prefix: string): Promise<{ id: string; oldTask: SimTask }> {
  const id = await harness.create({ hostname: uniqueHostname(prefix), behaviour: { listenAfterMs: 1000 } });
  await pollUntil(
    async () => ({ state: (await harness.read(id))?.state, status: await harness.answer(id) }),
    ({ state, status }) => state === 'running' && status === 200,
    60_000,
  );
  return { id, oldTask: runningTaskOf(id) };
}

describe('a zero-downtime restart on AWS whose route writer lags', () => {
  it('answers every request 200 through the routes, and stops the old task only once its route is out of the zone', async () => {
    const { id, oldTask } = await answering('lag');
    writerLagMs = 3_000;
    const stoppedWhileRouted: string[] = [];
    const watch = setInterval(() => {
      if (oldTask.desiredStatus === 'STOPPED' && routed(oldTask)) stoppedWhileRouted.push(`${oldTask.lastStatus} while routed`);
    }, 20);
    const client = steadyRequests(() => harness.answer(id));
    try {
      await sleep(300);
      await harness.restart(id);
      await pollUntil(
        async () => oldTask.desiredStatus,
        (status) => status === 'STOPPED',
        60_000,
      );
      await sleep(1_000);
    } finally {
      clearInterval(watch);
      writerLagMs = 0;
    }
    const statuses = await client.stop();

    expect(statuses.length).toBeGreaterThan(10);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect(stoppedWhileRouted).toEqual([]);
    expect(oldTask.stoppedReason).toBe('Replaced by a newer task of the container');
    expect(runningTaskOf(id).taskId).not.toBe(oldTask.taskId);
    await harness.remove(id);
  }, 120_000);

  it('stops the old task after the bound, with an error that says why, when the writer never withdraws its route', async () => {
    const { id, oldTask } = await answering('bound');
    const errors = vi.spyOn(log, 'error');
    writerRefusesWithdrawals = true;
    try {
      await harness.restart(id);
      const promotedAt = Date.now();
      await pollUntil(
        async () => oldTask.desiredStatus,
        (status) => status === 'STOPPED',
        60_000,
      );
      const waitedMs = Date.now() - promotedAt;

      // Not before the bound (its clock started at the promotion, a moment before the restart answered), nor long after.
      expect(waitedMs).toBeGreaterThan(MAX_WAIT_MS - 2_000);
      expect(waitedMs).toBeLessThan(MAX_WAIT_MS + 15_000);
      expect(routed(oldTask)).toBe(true);
      expect(errors).toHaveBeenCalledWith(
        'Stopping a restart’s old task before its routes moved: the route writer did not catch up in time',
        expect.objectContaining({ containerId: id, taskArn: oldTask.taskArn, maxWaitMs: MAX_WAIT_MS }),
      );
    } finally {
      writerRefusesWithdrawals = false;
      errors.mockRestore();
    }
    await harness.remove(id);
  }, 120_000);
});
