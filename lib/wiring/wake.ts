import { createHash } from 'node:crypto';
import { TaskAddressCache } from '../aws/task-address-cache.js';
import type { WakeEndpointDeps } from '../aws/wake-endpoint.js';
import type { RestartScheduler } from '../containers/restart-policy.js';
import type { ReconcilableRuntime } from '../containers/runtime.js';
import type { RunPolicy } from '../containers/run-policy.js';
import type { WakeHoldLimits } from '../containers/wake-holds.js';
import { dynamoContainerActivity } from '../store/dynamo-container-activity.js';
import { DynamoWakeHolds } from '../store/dynamo-wake-holds.js';
import { containerStore } from './containers.js';
import { sleepingServiceWith } from './sleeping-containers.js';

/** A secret's SHA-256, fetched once per container (a failed fetch is tried again at the next request). */
export function secretDigestOf(fetchSecret: () => Promise<string>): () => Promise<Buffer> {
  let digest: Promise<Buffer> | undefined;
  return () => {
    digest ??= fetchSecret()
      .then((secret) => createHash('sha256').update(secret, 'utf8').digest())
      .catch((error: unknown) => {
        digest = undefined;
        throw error;
      });
    return digest;
  };
}

/**
 * The wake endpoint over the DynamoDB store and the given runtime (ECS): wakes as the owner
 * through SleepingContainerService (quota and run policy as at a start), holds at most the given
 * number of requests at once, reads the woken task's address from the runtime, and records the
 * wake's time on the container's item.
 */
export function wakeEndpointWith(parts: {
  runtime: ReconcilableRuntime;
  deferredWork: RestartScheduler | undefined;
  runPolicy?: RunPolicy;
  secret: () => Promise<string>;
  appsDomain: string;
  budgetMs: number;
  pollMs?: number;
  /** The bound of held wakes (WAKE_HOLDS_PER_CONTAINER, WAKE_HOLDS_MAX), kept in the table; unbounded without it. */
  holdLimits?: WakeHoldLimits;
}): WakeEndpointDeps {
  const service = sleepingServiceWith(parts.runtime, parts.deferredWork, parts.runPolicy);
  const addresses = new TaskAddressCache();
  return {
    secretDigest: secretDigestOf(parts.secret),
    appsDomain: parts.appsDomain,
    recordWake: (containerId, wakeMs) => dynamoContainerActivity.recordWake(containerId, wakeMs),
    wake: {
      containerIdOfHostname: (hostname) => containerStore.containerIdOfHostname(hostname),
      container: (containerId) => containerStore.get(containerId),
      wake: (containerId) => service.wake(containerId),
      // DescribeTasks as the reconciler reads it: the task's ENI address (lib/aws/ecs-task-status.ts), remembered a few seconds.
      addressOf: async ({ id, taskArn }) =>
        taskArn ? addresses.addressOf(id, taskArn, async () => (await parts.runtime.describeTasks([taskArn]))[0]?.address) : undefined,
      budgetMs: parts.budgetMs,
      ...(parts.pollMs !== undefined ? { pollMs: parts.pollMs } : {}),
      ...(parts.holdLimits ? { holds: new DynamoWakeHolds(parts.holdLimits) } : {}),
    },
  };
}
