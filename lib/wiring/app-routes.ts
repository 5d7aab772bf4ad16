import type { Route53Client } from '@aws-sdk/client-route-53';
import type { Config } from '../config.js';
import type { AppRoutes, PublishedRoutes } from '../dns-routes/app-routes.js';
import { Route53AppRoutes } from '../aws/route53-routes.js';
import { DynamoPublishedRoutes } from '../store/dynamo-published-routes.js';

export interface AppRouting {
  routes: AppRoutes;
  published: PublishedRoutes;
  /** Route53AppRoutes.limitNegativeCaching: the zone's writer makes a resolver forget an absent route within seconds. */
  limitNegativeCaching(): Promise<boolean>;
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
  const routes = client ? new Route53AppRoutes(zone, client) : new Route53AppRoutes(zone);
  return {
    routes,
    published: new DynamoPublishedRoutes(),
    limitNegativeCaching: () => routes.limitNegativeCaching(),
  };
}
