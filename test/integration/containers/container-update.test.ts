import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { Caller, StoredContainer } from '../../../lib/containers/container.js';
import { containerServiceWith, containerStore } from '../../../lib/wiring/containers.js';
import { localContainers } from '../../../lib/wiring/local-containers.js';
import { ConflictError } from '../../../lib/errors.js';
import { newId } from '../../../lib/ids.js';
import { runShutdown } from '../../../lib/local/lifecycle.js';
import { holdReadsUntil } from '../../support/held-reads.js';
import { pollUntil } from '../../support/poll.js';
import { nginxWorkload } from '../../support/workloads.js';

vi.hoisted(() => {
  // Before lib/config loads: local processes count as running quickly, so many restarts fit a test.
  process.env.LOCAL_CONTAINER_READY_MS = '30';
  // No proxy sends requests here, so no restart needs to drain its old task.
  process.env.RESTART_DRAIN_MS = '0';
});

/*
 * PATCH (ContainerService.update) on the local runtime over DynamoDB Local: its optimistic
 * locking against transitions, and the task history that restarts build.
 */
const containerService = containerServiceWith({ runtime: localContainers().runtime });
const owner: Caller = { userId: newId(), role: 'user' };
let counter = 0;
const spec = () => ({
  hostname: `upd-${process.pid}-${(counter += 1)}`,
  ...nginxWorkload(),
  // Listens on $PORT: a task counts as running once it answers.
  command: ['/bin/sh', '-c', 'exec busybox httpd -f -p 127.0.0.1:$PORT -h .'],
  restartPolicy: 'on-failure' as const,
});

afterEach(() => vi.restoreAllMocks());
afterAll(() => runShutdown());

async function running(): Promise<StoredContainer> {
  const created = await containerService.create(owner, spec());
  return pollUntil(
    () => containerService.get(owner, created.id),
    (container) => container.state === 'running',
  );
}

describe('ContainerService.update', () => {
  it('changes what the next task runs, at the next version, keeping the state and the current task', async () => {
    const before = await running();

    const updated = await containerService.update(owner, before.id, { env: { GREETING: 'hi' }, port: 3000 });

    expect(updated).toEqual({
      ...before,
      env: { GREETING: 'hi' },
      port: 3000,
      version: before.version + 1,
      release: 2,
      updatedAt: expect.any(String),
    });
    expect(await containerStore.get(before.id)).toEqual(updated);
  });

  it('of two PATCHes that read the same version, exactly one commits; the other gets ConflictError', async () => {
    const container = await running();
    holdReadsUntil(containerStore, 'get', 2);

    const outcomes = await Promise.allSettled([
      containerService.update(owner, container.id, { env: { WHO: 'first' } }),
      containerService.update(owner, container.id, { env: { WHO: 'second' } }),
    ]);
    vi.restoreAllMocks();

    const winners = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    const losers = outcomes.filter((outcome) => outcome.status === 'rejected');
    expect(winners).toHaveLength(1);
    expect(losers).toEqual([{ status: 'rejected', reason: expect.any(ConflictError) }]);
    expect(await containerStore.get(container.id)).toEqual((winners[0] as PromiseFulfilledResult<StoredContainer>).value);
  });

  it('of a PATCH and a stop that read the same version, exactly one commits; the other gets ConflictError', async () => {
    const container = await running();
    holdReadsUntil(containerStore, 'get', 2);

    const outcomes = await Promise.allSettled([
      containerService.update(owner, container.id, { env: { WHO: 'patch' } }),
      containerService.stop(owner, container.id),
    ]);
    vi.restoreAllMocks();

    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toEqual([
      { status: 'rejected', reason: expect.any(ConflictError) },
    ]);
    expect((await containerStore.get(container.id))!.version).toBe(container.version + 1);
  });

  it('keeps the last 20 task ids, newest first, across 21 restarts', async () => {
    const container = await running();
    const seen = [container.taskArn!];

    for (let restart = 0; restart < 21; restart += 1) seen.unshift((await containerService.restart(owner, container.id)).taskArn!);

    const stored = await containerStore.get(container.id);
    expect(new Set(seen).size).toBe(22);
    expect(stored!.taskHistory).toEqual(seen.slice(0, 20));
  }, 30_000);
});
