import type { Config } from '../config.js';
import { Reconciler, type ReconcilerOptions } from '../containers/reconciler.js';
import type { RestartScheduler } from '../containers/restart-policy.js';
import type { ReconcilableRuntime } from '../containers/runtime.js';
import type { RunPolicy } from '../containers/run-policy.js';
import type { AppRoutes, RouteRequests } from '../dns-routes/app-routes.js';
import { appRoutingFrom } from './app-routes.js';
import { routeRequestsFrom } from './route-requests.js';
import { containerServiceWith, containerStore } from './containers.js';
import { volumeMeasureStarterFrom } from './volume-measure-start.js';
import type { VolumeMeasureTimes } from '../aws/volume-measuring.js';

/**
 * The reconciler over the DynamoDB store and the given runtime (ECS in Lambda, the local runtime
 * in `npm start`), repairing the private zone too where the deployment routes to containers, and
 * relaunching the containers whose restart policy's backoff has passed.
 */
export function reconcilerWith(
  runtime: ReconcilableRuntime,
  settings?: Config,
  deferredWork?: RestartScheduler,
  runPolicy?: RunPolicy,
  /**
   * How long past its grace a provisioning container waits for its task's event (a run on a short schedule waits less);
   * `routing`: the zone's records and writer with clients of their own (a simulated function instance), else from `settings`.
   */
  timing?: Pick<ReconcilerOptions, 'lostEventMarginMs'> & {
    routing?: { routes: Pick<AppRoutes, 'listPublished'>; requests: RouteRequests };
    /** The period of volume measures a task whose RUNNING event was lost begins (a test's shorter one). */
    volumeMeasureTimes?: Pick<VolumeMeasureTimes, 'sidecarPeriodMs'>;
  },
): Reconciler {
  const { routing: ownRouting, volumeMeasureTimes, ...margins } = timing ?? {};
  const beginVolumeMeasures = settings
    ? volumeMeasureStarterFrom(settings, volumeMeasureTimes ? { times: volumeMeasureTimes } : {})
    : undefined;
  const routing = ownRouting ?? (settings ? routingFrom(settings) : undefined);
  const service = containerServiceWith({ runtime, deferredWork, ...(runPolicy ? { runPolicy } : {}) });
  return new Reconciler(containerStore, runtime, {
    ...margins,
    ...(settings ? { drainMs: settings.RESTART_DRAIN_MS } : {}),
    ...(routing ? { routing } : {}),
    // The backstop of the restart policy's timers: containers whose backoff has passed.
    restartDue: async (deadline, cursor) => {
      const { relaunched, cursor: next } = await service.relaunchAllDue(deadline, cursor);
      return { begun: relaunched, ...(next ? { cursor: next } : {}) };
    },
    // A lost RUNNING or STOPPED event of a provisioning container, applied from what the runtime says now; a RUNNING
    // task with a mount begins its volume's measures, as its event would have (lib/aws/task-event-messages.ts).
    applyTaskStatus: async (status) => {
      const outcome = await service.applyTaskStatus(status);
      if (status.lastStatus === 'RUNNING') await beginVolumeMeasures?.(status.containerId, status.taskArn);
      return outcome;
    },
  });
}

/** The zone to list and the writer to ask, where the deployment routes to containers. */
function routingFrom(settings: Config): { routes: Pick<AppRoutes, 'listPublished'>; requests: RouteRequests } | undefined {
  const zone = appRoutingFrom(settings);
  const requests = routeRequestsFrom(settings);
  return zone && requests ? { routes: zone.routes, requests } : undefined;
}
