import { setTimeout as sleep } from 'node:timers/promises';
import { describeError, log } from '../log.js';
import type { ContainerStore } from './container-store.js';
import { holdsCpu, type QuotaUsage } from './quota.js';
import type { ReconcileReport } from './reconcile-report.js';
import { MAX_TASKS_PER_CALL } from './runtime.js';

/** An owner's containers beyond this are not recounted (admins are not limited; a user holds at most their quota). */
const MAX_RECOUNT_CONTAINERS = 1000;

/**
 * Recounts each owner's use from their containers and corrects a stored use that disagrees.
 * The owner index is eventually consistent, so a use is corrected only when two counts a
 * pause apart agree with each other, and the correction is conditional on the stored use not
 * having moved since the first: any write that charged meanwhile makes it a no-op.
 */
export async function reconcileUsage(
  store: ContainerStore,
  owners: string[],
  report: Pick<ReconcileReport, 'usageChecked' | 'usageCorrected' | 'racesLost'>,
  limits: { maxUsageChecks: number; usageSettleMs: number; deadline: number },
): Promise<void> {
  const mismatches: Array<{ userId: string; stored: QuotaUsage; counted: QuotaUsage }> = [];
  for (const userId of owners.slice(0, limits.maxUsageChecks)) {
    if (Date.now() >= limits.deadline) break;
    report.usageChecked += 1;
    const before = await store.usageOf(userId);
    const counted = await countUsage(store, userId);
    if (!counted) continue;
    const stored = await store.usageOf(userId);
    // A use that moved while it was counted was being charged meanwhile: no mismatch to settle, the next run looks again.
    if (!sameUsage(before, stored)) continue;
    if (!sameUsage(stored, counted)) mismatches.push({ userId, stored, counted });
  }
  if (mismatches.length === 0) return;
  await sleep(limits.usageSettleMs);
  for (const { userId, stored, counted } of mismatches) {
    const recounted = await countUsage(store, userId);
    const restored = await store.usageOf(userId);
    if (!recounted || !sameUsage(recounted, counted) || !sameUsage(restored, stored)) continue;
    try {
      if (await store.correctUsage(userId, stored, counted)) {
        report.usageCorrected += 1;
        log.warn('Reconciler corrected a quota use', { userId, stored, counted });
      } else report.racesLost += 1;
    } catch (error) {
      log.error('Reconciler could not correct a quota use', { userId, ...describeError(error) });
    }
  }
}

/** What an owner holds, read item by item (consistent); undefined when they have too many to recount. */
async function countUsage(store: ContainerStore, userId: string): Promise<QuotaUsage | undefined> {
  const usage: QuotaUsage = { containers: 0, runningCpu: 0, runningMemoryMb: 0 };
  let cursor: string | undefined;
  let seen = 0;
  do {
    const page = await store.listOwnedBy(userId, { limit: MAX_TASKS_PER_CALL, ...(cursor ? { cursor } : {}) });
    seen += page.items.length;
    if (seen > MAX_RECOUNT_CONTAINERS) return undefined;
    // The index is eventually consistent: each container is read itself, the page's in one batched read.
    const read = await store.getMany(page.items.map((listed) => listed.id));
    for (const container of read.values()) {
      usage.containers += 1;
      if (holdsCpu(container.state)) {
        usage.runningCpu += container.cpuCores;
        usage.runningMemoryMb += container.memoryMb;
      }
    }
    cursor = page.nextCursor;
  } while (cursor);
  return usage;
}

const sameUsage = (a: QuotaUsage, b: QuotaUsage): boolean =>
  a.containers === b.containers && Math.abs(a.runningCpu - b.runningCpu) < 1e-9 && a.runningMemoryMb === b.runningMemoryMb;
