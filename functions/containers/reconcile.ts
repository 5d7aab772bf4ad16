import middy from '@middy/core';
import type { Context, ScheduledEvent } from 'aws-lambda';
import { containerRuntime, runPolicy } from '#wiring/container-runtime';
import { deferredWork } from '../../lib/wiring/deferred-work.js';
import { config } from '../../lib/config.js';
import type { ReconcileReport } from '../../lib/containers/reconciler.js';
import { describeError, log, withInvocationLog } from '../../lib/log.js';
import { METRIC } from '../../lib/observability/metric-names.js';
import { countEvent } from '../../lib/observability/metrics.js';
import { reconcilerWith } from '../../lib/wiring/reconciler.js';
import { idleSweepWith } from '../../lib/wiring/sleeping-containers.js';

const reconciler = reconcilerWith(containerRuntime, config, deferredWork, runPolicy);
const idleSweep = idleSweepWith(containerRuntime, deferredWork, runPolicy);
const RESERVE_MS = 15_000;

/**
 * The EventBridge schedule (CDK context `reconcileMinutes`) → one bounded reconciliation run
 * (docs/containers.md, "Reconciliation"). Each change is logged where it is made; the run's
 * counts are logged here, one line per run. A failed run is thrown: the next one starts over
 * from the same checkpoint, so nothing is lost.
 */
const reconcile = middy<ScheduledEvent, ReconcileReport>().handler(async (event, context) => {
  const startedAt = Date.now();
  // Room to finish the page in hand and save the checkpoint before the function's timeout.
  const report = await reconciler.run({ deadline: startedAt + context.getRemainingTimeInMillis() - RESERVE_MS });
  // Then the containers nobody used for their idle timeout go to sleep, as the local loop does (docs/routing.md, "Sleep and wake on AWS").
  const containersSlept = await idleSweep().catch((error: unknown) => {
    log.error('The idle sweep failed; the next run sweeps again', describeError(error));
    return 0;
  });
  log.info('Reconciliation run', { eventId: event.id, durationMs: Date.now() - startedAt, ...report, containersSlept });
  // Every change the run made is drift the rest of the service did not catch (docs/operations.md, "Alarms").
  const corrections =
    report.orphanTasksStopped +
    report.supersededTasksStopped +
    report.containersFailed +
    report.containersStopped +
    report.usageCorrected +
    report.staleRoutesFound +
    report.missingRoutesFound;
  countEvent(METRIC.reconcilerCorrections, {}, corrections);
  countEvent(METRIC.containersFailed, {}, report.containersFailed);
  return report;
});

export const handler = (event: ScheduledEvent, context: Context): Promise<ReconcileReport> =>
  withInvocationLog(context, { lambdaRequestId: context.awsRequestId }, () => reconcile(event, context));
