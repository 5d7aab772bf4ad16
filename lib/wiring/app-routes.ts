import type { Config } from '../config.js';
import type { AppRoutes } from '../containers/app-routes.js';
import { Route53AppRoutes } from '../aws/route53-routes.js';

/**
 * The private DNS records the AWS reverse proxy reads, when the deployment routes to containers
 * (CDK context appsDomain and appsCertificateArn set the zone's id and name); else undefined.
 */
export function appRoutesFrom(settings: Config): AppRoutes | undefined {
  if (!settings.APPS_DNS_ZONE_ID || !settings.APPS_DNS_ZONE_NAME) return undefined;
  return new Route53AppRoutes({ hostedZoneId: settings.APPS_DNS_ZONE_ID, zoneName: settings.APPS_DNS_ZONE_NAME });
}
