import type { Route53Client } from '@aws-sdk/client-route-53';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Config } from '../config.js';
import type { AppRoutes, PublishedRoutes, RouteRequests } from '../containers/app-routes.js';
import { Route53AppRoutes } from '../aws/route53-routes.js';
import { SqsRouteRequests } from '../aws/sqs-route-requests.js';
import { DynamoPublishedRoutes } from '../store/dynamo-published-routes.js';

export interface AppRouting {
  routes: AppRoutes;
  published: PublishedRoutes;
}

/**
 * The private DNS records the AWS reverse proxy reads, and the table's note of what was
 * published per task, when the deployment routes to containers (CDK context appsDomain and
 * appsCertificateArn set the zone's id and name); else undefined. The zone's writer changes the
 * records; the reconciler only lists them. `client`: this process's shared Route 53 client unless
 * given (a simulated function instance brings its own).
 */
export function appRoutingFrom(settings: Config, client?: Route53Client): AppRouting | undefined {
  if (!settings.APPS_DNS_ZONE_ID || !settings.APPS_DNS_ZONE_NAME) return undefined;
  const zone = { hostedZoneId: settings.APPS_DNS_ZONE_ID, zoneName: settings.APPS_DNS_ZONE_NAME };
  return {
    routes: client ? new Route53AppRoutes(zone, client) : new Route53AppRoutes(zone),
    published: new DynamoPublishedRoutes(),
  };
}

/**
 * Where the functions that decide a route's fate send it (the route changes queue) when the
 * deployment routes to containers; else undefined. `client`: as above, for SQS.
 */
export function routeRequestsFrom(settings: Config, client?: SQSClient): RouteRequests | undefined {
  if (!settings.ROUTE_CHANGES_QUEUE_URL) return undefined;
  return client ? new SqsRouteRequests(settings.ROUTE_CHANGES_QUEUE_URL, client) : new SqsRouteRequests(settings.ROUTE_CHANGES_QUEUE_URL);
}
