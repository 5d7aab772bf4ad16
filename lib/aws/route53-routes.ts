import {
  ChangeResourceRecordSetsCommand,
  ListResourceRecordSetsCommand,
  Route53Client,
  type Change,
  type ListResourceRecordSetsCommandInput,
  type ResourceRecordSet,
} from '@aws-sdk/client-route-53';
import { config } from '../config.js';
import type { AppRoute, AppRoutes } from '../containers/app-routes.js';

/**
 * Created once per Lambda container and shared by every invocation. Route 53 throttles per
 * account (historically 5 requests/s for all its API; now a bucket of 50 refilled at 10/s,
 * https://docs.aws.amazon.com/Route53/latest/DeveloperGuide/throttling-api-requests.html) and
 * answers `Throttling` or, while a change to the same zone is in progress,
 * `PriorRequestNotComplete` (https://repost.aws/knowledge-center/route-53-avoid-throttling-errors).
 * The SDK retries both as throttling errors; adaptive mode also slows this client down when it
 * is throttled, and 6 attempts back off for up to about 20 s in all (docs/containers.md, "Routing").
 */
export const ROUTE53_MAX_ATTEMPTS = 6;
export const route53Client = new Route53Client({ region: config.AWS_REGION, maxAttempts: ROUTE53_MAX_ATTEMPTS, retryMode: 'adaptive' });

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

/** Where the per-task address records live, under the zone: `{task id}.task.{zone}`. */
const TASK_LABEL = 'task';
const SET_IDENTIFIER = /^(?<containerId>[0-9a-f-]{36})\.(?<taskId>[A-Za-z0-9]{1,64})$/;
const SRV_VALUE = /^0 0 (?<port>\d{1,5}) (?<target>\S+?)\.?$/;
/** ListResourceRecordSets answers up to 300 record sets a page. */
const PAGE_SIZE = 300;

/**
 * The records by which the reverse proxy finds a container's tasks (docs/containers.md,
 * "Routing"), in the private hosted zone of the VPC, owned per task:
 *
 * - `SRV   _http._tcp.{hostname}.{zone}`, weighted, SetIdentifier `{container id}.{task id}`,
 *   → `0 0 {port} {task id}.task.{zone}`
 * - `A     {task id}.task.{zone}` → the task's private IPv4 address
 *
 * The proxy looks up the SRV record of the request's hostname (RFC 2782) for the port and
 * target, then the target's A record. Weighted records of one name are told apart by their
 * SetIdentifier and Route 53 answers one of them per query
 * (https://docs.aws.amazon.com/Route53/latest/DeveloperGuide/resource-record-sets-values-weighted.html),
 * so two tasks of a container (a restart's overlap) are both answered and each is removed on
 * its own. Both records of a task change in one ChangeResourceRecordSets batch, which Route 53
 * applies all or nothing; a DELETE must name a record's values exactly, so it can only remove
 * the records of the task it names
 * (https://docs.aws.amazon.com/Route53/latest/APIReference/API_ChangeResourceRecordSets.html).
 */
export class Route53AppRoutes implements AppRoutes {
  constructor(
    private readonly settings: Route53RoutesSettings,
    private readonly client: Route53Client = route53Client,
  ) {}

  async publish(route: AppRoute): Promise<void> {
    await this.change('UPSERT', route);
  }

  /** InvalidChangeBatch: the records are not there (any more), which is what a withdrawal wants. */
  async withdraw(route: AppRoute): Promise<boolean> {
    try {
      await this.change('DELETE', route);
      return true;
    } catch (error) {
      if (error instanceof Error && error.name === 'InvalidChangeBatch') return false;
      throw error;
    }
  }

  /**
   * Every task's route in the zone: all pages of ListResourceRecordSets, which continue from
   * NextRecordName, NextRecordType and (weighted records) NextRecordIdentifier while IsTruncated
   * (https://docs.aws.amazon.com/Route53/latest/APIReference/API_ListResourceRecordSets.html).
   * Records this class did not write (SOA, NS, anything an operator added) are left out.
   */
  async listPublished(): Promise<{ routes: AppRoute[] }> {
    const services: Array<Omit<AppRoute, 'ip'> & { target: string }> = [];
    const addresses = new Map<string, string>();
    let next: Pick<ListResourceRecordSetsCommandInput, 'StartRecordName' | 'StartRecordType' | 'StartRecordIdentifier'> = {};
    for (;;) {
      const page = await this.client.send(
        new ListResourceRecordSetsCommand({ HostedZoneId: this.settings.hostedZoneId, MaxItems: PAGE_SIZE, ...next }),
      );
      for (const record of page.ResourceRecordSets ?? []) {
        const service = this.serviceOf(record);
        if (service) services.push(service);
        const address = record.Type === 'A' && !record.SetIdentifier && record.ResourceRecords?.[0]?.Value;
        if (address) addresses.set(withoutDot(record.Name ?? ''), address);
      }
      if (!page.IsTruncated || !page.NextRecordName) break;
      next = {
        StartRecordName: page.NextRecordName,
        ...(page.NextRecordType ? { StartRecordType: page.NextRecordType } : {}),
        ...(page.NextRecordIdentifier ? { StartRecordIdentifier: page.NextRecordIdentifier } : {}),
      };
    }
    return {
      routes: services.map(({ target, ...service }) => ({ ...service, ip: addresses.get(target) ?? '' })),
    };
  }

  private serviceOf(record: ResourceRecordSet): (Omit<AppRoute, 'ip'> & { target: string }) | undefined {
    const owner = record.Type === 'SRV' ? SET_IDENTIFIER.exec(record.SetIdentifier ?? '')?.groups : undefined;
    const prefix = '_http._tcp.';
    const suffix = `.${this.settings.zoneName}`;
    const name = withoutDot(record.Name ?? '');
    const value = SRV_VALUE.exec(record.ResourceRecords?.[0]?.Value ?? '')?.groups;
    if (!owner?.containerId || !owner.taskId || !value?.port || !value.target) return undefined;
    if (!name.startsWith(prefix) || !name.endsWith(suffix)) return undefined;
    return {
      containerId: owner.containerId,
      taskId: owner.taskId,
      hostname: name.slice(prefix.length, -suffix.length),
      port: Number(value.port),
      target: value.target,
    };
  }

  private taskAddressName(taskId: string): string {
    return `${taskId}.${TASK_LABEL}.${this.settings.zoneName}`;
  }

  private async change(action: 'UPSERT' | 'DELETE', route: AppRoute): Promise<void> {
    const target = this.taskAddressName(route.taskId);
    const changes: Change[] = [
      {
        Action: action,
        ResourceRecordSet: { Name: target, Type: 'A', TTL: ROUTE_TTL_SECONDS, ResourceRecords: [{ Value: route.ip }] },
      },
      {
        Action: action,
        ResourceRecordSet: {
          Name: `_http._tcp.${route.hostname}.${this.settings.zoneName}`,
          Type: 'SRV',
          SetIdentifier: `${route.containerId}.${route.taskId}`,
          Weight: 1,
          TTL: ROUTE_TTL_SECONDS,
          // priority weight port target (RFC 2782)
          ResourceRecords: [{ Value: `0 0 ${route.port} ${target}` }],
        },
      },
    ];
    await this.client.send(
      new ChangeResourceRecordSetsCommand({
        HostedZoneId: this.settings.hostedZoneId,
        ChangeBatch: { Comment: `${action} ${route.hostname} task ${route.taskId}`, Changes: changes },
      }),
    );
  }
}

const withoutDot = (name: string): string => (name.endsWith('.') ? name.slice(0, -1) : name);
