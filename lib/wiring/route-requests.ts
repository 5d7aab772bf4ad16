import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Config } from '../config.js';
import type { RouteRequests } from '../dns-routes/app-routes.js';
import { SqsRouteRequests } from '../aws/sqs-route-requests.js';

/**
 * Where the functions that decide a route's fate send it (the route changes queue, which the
 * zone's one writer drains) when the deployment routes to containers; else undefined. A module
 * of its own, so that those functions carry the SQS client and not Route 53's. `client`: this
 * process's shared SQS client unless given (a simulated function instance brings its own).
 */
export function routeRequestsFrom(settings: Config, client?: SQSClient): RouteRequests | undefined {
  if (!settings.ROUTE_CHANGES_QUEUE_URL) return undefined;
  return client ? new SqsRouteRequests(settings.ROUTE_CHANGES_QUEUE_URL, client) : new SqsRouteRequests(settings.ROUTE_CHANGES_QUEUE_URL);
}
