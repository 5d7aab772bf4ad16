import type { Config } from '../config.js';
import { Reconciler, type ReconcilerOptions } from '../containers/reconciler.js';
import type { RestartScheduler } from '../containers/restart-policy.js';
import type { ReconcilableRuntime } from '../containers/runtime.js';
import type { RunPolicy } from '../containers/run-policy.js';
import type { AppRoutes, RouteRequests } from '../dns-routes/app-routes.js';
import { appRoutingFrom } from './app-routes.js';
import { routeRequestsFrom } from './route-requests.js';
import { containerServiceWith, containerStore } from './containers.js';

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
  },
): Reconciler {
  const { routing: ownRouting, ...margins } = timing ?? {};
  const routing = ownRouting ?? (settings ? routingFrom(settings) : undefined);
  const service = containerServiceWith({ runtime, deferredWork, ...(runPolicy ? { runPolicy } : {}) });
  return new Reconciler(containerStore, runtime, {
    ...margins,
    ...(routing ? { routing } : {}),
    // The backstop of the restart policy's timers: containers whose backoff has passed.
    restartDue: async (deadline, cursor) => {
      const { relaunched, cursor: next } = await service.relaunchAllDue(deadline, cursor);
      return { begun: relaunched, ...(next ? { cursor: next } : {}) };
    },
    // A lost RUNNING or STOPPED event of a provisioning container, applied from what the runtime says now.
    applyTaskStatus: (status) => service.applyTaskStatus(status),
  });
}

/** The zone to list and the writer to ask, where the deployment routes to containers. */
function routingFrom(settings: Config): { routes: Pick<AppRoutes, 'listPublished'>; requests: RouteRequests } | undefined {
  const zone = appRoutingFrom(settings);
  const requests = routeRequestsFrom(settings);
  return zone && requests ? { routes: zone.routes, requests } : undefined;
}
