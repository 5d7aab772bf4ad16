import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { StoredContainer } from '../../../lib/containers/container.js';
import { CHANGED_MEANWHILE, COMMIT_ATTEMPTS } from '../../../lib/containers/container-core.js';
import type { ContainerService } from '../../../lib/containers/container-service.js';
import { ConflictError } from '../../../lib/errors.js';
import { containerRuntime } from '../../../lib/wiring/container-runtime.js';
import { containerServiceWith, containerStore } from '../../../lib/wiring/containers.js';
import { deferredWork } from '../../../lib/wiring/deferred-work.js';
import { type AwsSim, simPortFor, startAwsSim } from '../../support/aws-sim/index.js';
import { type EcsSimStack, SIM_ROUTE53 } from '../../support/conformance/ecs-harness.js';
import { uniqueHostname } from '../../support/conformance/journeys.js';
import { closeEcsSim, wiredEcsSimStack } from '../../support/conformance/wired-ecs-stack.js';
import { pollUntil } from '../../support/poll.js';

/*
 * The zero-downtime restart on the AWS simulator while the system writes the container's record
 * itself (docs/containers.md, "Restart"): a task's statuses (doubled, late and reordered, as
 * EventBridge delivers them), its readiness and the promotion that makes it current move the
 * record's state and tasks without a new version. A restart loses (409) only to a change a caller
 * made: another restart, a stop, a delete, a PATCH.
 */
await vi.hoisted(async () => {
  const { ecsSimSettings } = await import('../../support/ecs-settings.js');
  Object.assign(process.env, ecsSimSettings({ RESTART_DRAIN_MS: '200' }));
});

let sim: AwsSim;
let stack: EcsSimStack;
let service: ContainerService;

beforeAll(async () => {
  sim = await startAwsSim({
    port: simPortFor(process.pid),
    seed: 41,
    ecs: { provisioningMs: [100, 300], pendingMs: [100, 300], stopTimeoutMs: 1000 },
    route53: SIM_ROUTE53,
    taskEvents: { duplicate: 0.3, delayMs: [0, 300], reorder: 0.2, reorderMs: 500 },
  });
  service = containerServiceWith({ runtime: containerRuntime, deferredWork });
  stack = wiredEcsSimStack(sim, service);
}, 60_000);

afterEach(() => vi.restoreAllMocks());
afterAll(() => closeEcsSim(stack, sim));

async function runningContainer(): Promise<StoredContainer> {
  const harness = stack.harness();
  const id = await harness.create({ hostname: uniqueHostname('load'), behaviour: {} });
  await pollUntil(
    () => harness.read(id),
    (readout) => readout?.state === 'running',
    20_000,
  );
  return (await containerStore.get(id))!;
}

/** The restart's answer: 200 with the container, or the error's status and message. */
const answerOf = (restart: Promise<StoredContainer>) =>
  restart.then(
    (container) => ({ status: 200, container }),
    (error: Error & { statusCode?: number }) => ({ status: error.statusCode ?? 500, message: error.message, error }),
  );

const tasksOf = (containerId: string) => [...sim.ecs.tasks.values()].filter((task) => task.startedBy === containerId);

describe('A zero-downtime restart on ECS', () => {
  it("answers 200 when issued while an earlier restart's task is still coming up, whatever the system writes to the record meanwhile; the earlier one answers 409", async () => {
    // Prepare: three running containers, each restarted five times over.
    const containers = await Promise.all([runningContainer(), runningContainer(), runningContainer()]);
    const rounds = await Promise.all(
      containers.map(async ({ id }) => {
        const answers: Array<{ earlier: number; later: number }> = [];
        for (let round = 0; round < 5; round++) {
          const before = (await containerStore.get(id))!;
          // Act: a restart, and once its task is launched beside the old one (its caller still waiting,
          // or gone after 504), another. Between the second's read and its commit the system writes the
          // first one's task statuses, its readiness and its promotion, none with a new version.
          const earlier = answerOf(service.restart(stack.caller, id));
          await pollUntil(
            () => containerStore.get(id),
            (current) => current!.version > before.version && current!.pendingTaskArn !== undefined,
            10_000,
          );
          const later = await answerOf(service.restart(stack.caller, id));
          answers.push({ earlier: (await earlier).status, later: later.status });
          // Assess: the later restart runs on its own task, and no restart's task is left pending.
          expect(later).toMatchObject({ status: 200, container: { state: 'running' } });
          const after = (await containerStore.get(id))!;
          expect(after.taskArn).toBe((later as { container: StoredContainer }).container.taskArn);
          expect(after.pendingTaskArn).toBeUndefined();
        }
        return answers;
      }),
    );
    // Exactly one of each pair won: the later restart superseded the earlier one, whose task it stopped.
    expect(rounds.flat()).toEqual(Array.from({ length: 15 }, () => ({ earlier: 409, later: 200 })));
    for (const { id } of containers) {
      const current = (await containerStore.get(id))!.taskArn;
      await pollUntil(
        async () => tasksOf(id).filter((task) => task.lastStatus !== 'STOPPED'),
        (live) => live.length === 1,
        15_000,
      );
      expect(
        tasksOf(id)
          .filter((task) => task.lastStatus !== 'STOPPED')
          .map((task) => task.taskArn),
      ).toEqual([current]);
    }
  }, 180_000);

  it('of two restarts that read the same version, exactly one answers 200 and the other 409, and one new task takes over', async () => {
    // Prepare: both restarts read the container before either writes.
    const container = await runningContainer();
    const read = containerStore.get.bind(containerStore);
    let readers = 0;
    let bothRead!: () => void;
    const held = new Promise<void>((resolve) => (bothRead = resolve));
    vi.spyOn(containerStore, 'get').mockImplementation(async (containerId) => {
      const found = await read(containerId);
      if (containerId !== container.id || readers >= 2) return found;
      readers += 1;
      if (readers === 2) bothRead();
      await held;
      return found;
    });

    // Act
    const answers = await Promise.all([
      answerOf(service.restart(stack.caller, container.id)),
      answerOf(service.restart(stack.caller, container.id)),
    ]);

    // Assess
    expect(answers.map(({ status }) => status).sort()).toEqual([200, 409]);
    const loser = answers.find(({ status }) => status === 409) as { error: Error };
    expect(loser.error).toBeInstanceOf(ConflictError);
    expect(loser.error.message).toBe(CHANGED_MEANWHILE);
    const winner = answers.find(({ status }) => status === 200) as { container: StoredContainer };
    expect(winner.container).toMatchObject({ state: 'running', version: container.version + 1 });
    expect(winner.container.taskArn).not.toBe(container.taskArn);
    // One task was launched for the restart that won; the loser launched none.
    expect(tasksOf(container.id)).toHaveLength(2);
  }, 60_000);

  it('tries its claim again on a fresh read while only the system moved the record, up to COMMIT_ATTEMPTS writes, then answers 409', async () => {
    // Prepare: the claim loses as it does to a task status or a promotion written between its read and its write.
    const container = await runningContainer();
    const write = containerStore.beginTransition.bind(containerStore);
    let lost = 0;
    const losing = (times: number) =>
      vi.spyOn(containerStore, 'beginTransition').mockImplementation(async (...args) => {
        if (args[0] !== container.id || lost >= times) return write(...args);
        lost += 1;
        return { kind: 'conflict' };
      });

    // Act: four losses in a row, then a stream of them.
    const claims = losing(COMMIT_ATTEMPTS - 1);
    const restarted = await answerOf(service.restart(stack.caller, container.id));
    const claimsThatWon = claims.mock.calls.length;
    claims.mockRestore();
    lost = 0;
    const endless = losing(Number.POSITIVE_INFINITY);
    const refused = await answerOf(service.restart(stack.caller, container.id));

    // Assess
    expect(restarted).toMatchObject({ status: 200, container: { state: 'running', version: container.version + 1 } });
    expect(claimsThatWon).toBe(COMMIT_ATTEMPTS);
    expect(refused).toMatchObject({ status: 409, message: CHANGED_MEANWHILE });
    expect(endless.mock.calls).toHaveLength(COMMIT_ATTEMPTS);
    expect((await containerStore.get(container.id))!.version).toBe(container.version + 1);
  }, 60_000);
});
