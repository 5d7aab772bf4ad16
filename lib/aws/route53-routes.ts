import { ChangeResourceRecordSetsCommand, Route53Client, type Change } from '@aws-sdk/client-route-53';
import { config } from '../config.js';
import type { AppRoute, AppRoutes } from '../containers/app-routes.js';

/** Created once per Lambda container and shared by every invocation. */
export const route53Client = new Route53Client({ region: config.AWS_REGION });

export interface Route53RoutesSettings {
  hostedZoneId: string;
  /** The private zone's name, e.g. `container-hosting.internal`, without a trailing dot. */
  zoneName: string;
}

/**
 * Seconds resolvers may keep a record: a restarted container's new address reaches the proxy
 * within this plus the proxy's own refresh (infra/proxy/Caddyfile, `refresh 5s`).
 */
export const ROUTE_TTL_SECONDS = 5;

/**
 * The records by which the reverse proxy finds a container's task (docs/containers.md,
 * "Reaching a container"), in the private hosted zone of the VPC:
 *
 * - `A     {hostname}.{zone}`             → the task's private IPv4 address
 * - `SRV   _http._tcp.{hostname}.{zone}`  → `0 0 {port} {hostname}.{zone}`
 *
 * The proxy looks up the SRV record of the request's hostname (RFC 2782) for the port, then the
 * A record of its target. Both change in one ChangeResourceRecordSets batch, which Route 53
 * applies all or nothing (https://docs.aws.amazon.com/Route53/latest/APIReference/API_ChangeResourceRecordSets.html).
 */
export class Route53AppRoutes implements AppRoutes {
  constructor(
    private readonly settings: Route53RoutesSettings,
    private readonly client: Route53Client = route53Client,
  ) {}

  /** Points the hostname at this task (UPSERT: creates the records, or replaces an earlier task's). */
  async publish(route: AppRoute): Promise<void> {
    await this.change('UPSERT', route);
  }

  /**
   * Removes the hostname's records if they still point at this task. A DELETE must name the
   * record's current values exactly, so it fails (InvalidChangeBatch) when a newer task of the
   * container has replaced them, or when they are gone already: both leave the right records in place.
   * @returns whether records were removed.
   */
  async withdraw(route: AppRoute): Promise<boolean> {
    try {
      await this.change('DELETE', route);
      return true;
    } catch (error) {
      if (error instanceof Error && error.name === 'InvalidChangeBatch') return false;
      throw error;
    }
  }

  private async change(action: 'UPSERT' | 'DELETE', route: AppRoute): Promise<void> {
    const target = `${route.hostname}.${this.settings.zoneName}`;
    const changes: Change[] = [
      {
        Action: action,
        ResourceRecordSet: { Name: target, Type: 'A', TTL: ROUTE_TTL_SECONDS, ResourceRecords: [{ Value: route.ip }] },
      },
      {
        Action: action,
        ResourceRecordSet: {
          Name: `_http._tcp.${target}`,
          Type: 'SRV',
          TTL: ROUTE_TTL_SECONDS,
          // priority weight port target (RFC 2782)
          ResourceRecords: [{ Value: `0 0 ${route.port} ${target}` }],
        },
      },
    ];
    await this.client.send(
      new ChangeResourceRecordSetsCommand({
        HostedZoneId: this.settings.hostedZoneId,
        ChangeBatch: { Comment: `${action} ${route.hostname}`, Changes: changes },
      }),
    );
  }
}
