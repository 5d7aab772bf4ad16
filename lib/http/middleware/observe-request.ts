import { QuotaExceededError } from '../../errors.js';
import { log } from '../../log.js';
import { METRIC } from '../../observability/metric-names.js';
import { countEvent } from '../../observability/metrics.js';
import type { Route } from '../routes.js';
import type { EndpointMiddleware, EndpointRequest } from './types.js';

const startedAt = new WeakMap<object, number>();

function finish(route: Route, request: EndpointRequest): void {
  const status = request.response?.statusCode ?? 500;
  const begun = startedAt.get(request.context);
  // The kind of credential only (session, pat, oauth): never the credential or its hash.
  const principal = request.context.api?.principal?.kind ?? 'anonymous';
  log.info('Request handled', {
    route: route.id,
    method: route.method,
    status,
    durationMs: begun === undefined ? undefined : Date.now() - begun,
    principal,
  });
  countEvent(METRIC.requests, { route: route.id, statusClass: `${Math.floor(status / 100)}xx` });
  if (request.error instanceof QuotaExceededError) countEvent(METRIC.quotaRefusals);
}

/**
 * One log line and one `Requests` count per request, with the final status. Registered first,
 * so that middy runs its `after` and `onError` last, once the error envelope has answered.
 */
export function observeRequest(route: Route): EndpointMiddleware {
  return {
    name: 'observeRequest',
    before: async (request) => {
      startedAt.set(request.context, Date.now());
    },
    after: async (request) => finish(route, request),
    onError: async (request) => finish(route, request),
  };
}
