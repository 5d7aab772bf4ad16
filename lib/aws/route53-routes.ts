// Over 300 lines because a route's records, their change batches, the retry strategy for Route 53's throttling
// and the zone listing the reconciler reads must agree on one record format.
import {
  ChangeResourceRecordSetsCommand,
  ListResourceRecordSetsCommand,
  Route53Client,
  type Route53ClientConfig,
  type Change,
  type ListResourceRecordSetsCommandInput,
  type ResourceRecordSet,
} from '@aws-sdk/client-route-53';
import { config } from '../config.js';
import type { AppRoute, AppRoutes } from '../dns-routes/app-routes.js';

/**
 * Created once per Lambda container and shared by every invocation. Route 53 throttles per
 * account (historically 5 requests/s for all its API; now a bucket of 50 refilled at 10/s,
 * https://docs.aws.amazon.com/Route53/latest/DeveloperGuide/throttling-api-requests.html) and
 * answers `Throttling` or, while a change to the same zone is in progress,
 * `PriorRequestNotComplete` (https://repost.aws/knowledge-center/route-53-avoid-throttling-errors:
 * "use error retries and exponential backoff"). Both are retried by `route53RetryStrategy`.
 */
export const ROUTE53_MAX_ATTEMPTS = 6;
/** The first retry waits up to this long; each next one up to twice as long, never more than ROUTE53_RETRY_CAP_MS. */
export const ROUTE53_RETRY_BASE_MS = 100;
export const ROUTE53_RETRY_CAP_MS = 2_000;

type RetryStrategyV2 = Extract<NonNullable<Route53ClientConfig['retryStrategy']>, { acquireInitialRetryToken: unknown }>;
type RetryToken = Awaited<ReturnType<RetryStrategyV2['acquireInitialRetryToken']>>;

/**
 * Exponential backoff with full jitter from 100 ms: the SDK's own starts throttling errors at
 * 1 s and doubles to 16 s (6 attempts wait up to 31 s), and its adaptive mode then holds every
 * later request of the client to the rate it measured. For this client that only keeps a stale
 * route up, or a fresh one down, for longer: PriorRequestNotComplete means the zone's previous
 * change is still being applied, a fraction of a second, and the account's bucket refills a
 * token every 100-200 ms; the jitter spreads writers that collided. Six attempts wait at most
 * 100 + 200 + 400 + 800 + 1,600 = 3,100 ms in all; past them the error is the caller's (SQS
 * delivers its message again, the reconciler's next run repairs the zone). A client error
 * (InvalidChangeBatch, a record not there) is never retried.
 */
export function route53RetryStrategy(maxAttempts = ROUTE53_MAX_ATTEMPTS): RetryStrategyV2 {
  const token = (count: number, delayMs: number): RetryToken => ({ getRetryCount: () => count, getRetryDelay: () => delayMs });
  return {
    acquireInitialRetryToken: async () => token(0, 0),
    refreshRetryTokenForRetry: async (previous, errorInfo) => {
      const count = previous.getRetryCount();
      if (count + 1 >= maxAttempts || errorInfo.errorType === 'CLIENT_ERROR') throw new Error('No retry token available');
      const ceiling = Math.min(ROUTE53_RETRY_BASE_MS * 2 ** count, ROUTE53_RETRY_CAP_MS);
      return token(count + 1, Math.floor(Math.random() * ceiling));
    },
    recordSuccess: () => undefined,
  };
}

/**
 * A client as every function makes it, one per Lambda instance: a simulator of AWS that runs
 * several functions in one process gives each simulated instance its own
 * (test/support/aws-sim/function-instances.ts).
 */
export const newRoute53Client = (): Route53Client =>
  new Route53Client({ region: config.AWS_REGION, maxAttempts: ROUTE53_MAX_ATTEMPTS, retryStrategy: route53RetryStrategy() });
export const route53Client = newRoute53Client();

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
 * Seconds a resolver may remember that a name has no record (RFC 2308: the lesser of the SOA
 * record's TTL and its minimum field). Route 53 creates a zone's SOA with TTL 900 and minimum
 * 86400 (https://docs.aws.amazon.com/Route53/latest/DeveloperGuide/SOA-NSrecords.html), and the
 * VPC's resolver (https://docs.aws.amazon.com/Route53/latest/DeveloperGuide/resolver.html) keeps an
 * answer for its TTL, honouring any below 300 s
 * (https://repost.aws/questions/QUvpuFJT94QXefYL1jJuvKTw/how-to-change-ttl-of-aws-local-dns-resolver):
 * a sleeping container's absent route was remembered for 5 to 15 minutes after its first request,
 * although the wake published a route within a minute, and every request meanwhile went through
 * the wake function. With this, a woken container's route is found as soon as a fresh one would
 * be (ROUTE_TTL_SECONDS).
 */
export const NEGATIVE_ANSWER_TTL_SECONDS = ROUTE_TTL_SECONDS;

/** Where the per-task address records live, under the zone: `{task id}.task.{zone}`. */
const TASK_LABEL = 'task';
const SET_IDENTIFIER = /^(?<containerId>[0-9a-f-]{36})\.(?<taskId>[A-Za-z0-9]{1,64})$/;
const SRV_VALUE = /^0 0 (?<port>\d{1,5}) (?<target>\S+?)\.?$/;
/** ListResourceRecordSets answers up to 300 record sets a page. */
const PAGE_SIZE = 300;
/**
 * Routes per ChangeResourceRecordSets batch: a request holds at most 100 Change elements, 1,000
 * ResourceRecord elements and 32,000 characters of values
 * (https://docs.aws.amazon.com/Route53/latest/DeveloperGuide/DNSLimitations.html), and a route is
 * two changes of one record each (under 100 characters of values).
 */
export const ROUTES_PER_BATCH = 50;

/**
 * The records by which the reverse proxy finds a container's tasks (docs/routing.md,
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
    await this.send([['UPSERT', route]]);
  }

  /**
   * Withdrawals and publications together, a batch of ROUTES_PER_BATCH routes per request. A
   * batch whose DELETE names records no longer there (InvalidChangeBatch: a change applied whose
   * answer was lost, then sent again) is sent again as its publications alone, then its
   * withdrawals as the zone still lists them.
   */
  async change({ publish, withdraw }: { publish: readonly AppRoute[]; withdraw: readonly AppRoute[] }): Promise<void> {
    const changes: RouteChange[] = [
      ...withdraw.map((route): RouteChange => ['DELETE', route]),
      ...publish.map((route): RouteChange => ['UPSERT', route]),
    ];
    for (const batch of batchesOf(changes)) {
      try {
        await this.send(batch);
      } catch (error) {
        if (!isInvalidChangeBatch(error)) throw error;
        await this.publishAll(batch.flatMap(([action, route]) => (action === 'UPSERT' ? [route] : [])));
        await this.withdrawAll(batch.flatMap(([action, route]) => (action === 'DELETE' ? [route] : [])));
      }
    }
  }

  /**
   * Several routes in as few requests as Route 53 allows (ROUTES_PER_BATCH each): each request
   * counts once against the account's rate however many changes it holds, and is one change of
   * the zone for PriorRequestNotComplete
   * (https://repost.aws/knowledge-center/route-53-avoid-throttling-errors: "group individual
   * operations … into one change batch").
   */
  async publishAll(routes: readonly AppRoute[]): Promise<void> {
    for (const batch of batchesOf(routes)) await this.send(batch.map((route): RouteChange => ['UPSERT', route]));
  }

  /** InvalidChangeBatch: the records are not there (any more), which is what a withdrawal wants. */
  async withdraw(route: AppRoute): Promise<boolean> {
    try {
      await this.send([['DELETE', route]]);
      return true;
    } catch (error) {
      if (isInvalidChangeBatch(error)) return false;
      throw error;
    }
  }

  /**
   * Removes these routes' records, a batch per request; answers how many were there. A batch is
   * all or nothing, so one whose DELETE names records someone else removed meanwhile
   * (InvalidChangeBatch: the task state function withdrew one as its task left) is sent again
   * with only the routes the zone still lists, and route by route if that fails too.
   */
  async withdrawAll(routes: readonly AppRoute[]): Promise<number> {
    let withdrawn = 0;
    for (const batch of batchesOf(routes)) {
      try {
        await this.send(batch.map((route): RouteChange => ['DELETE', route]));
        withdrawn += batch.length;
        continue;
      } catch (error) {
        if (!isInvalidChangeBatch(error)) throw error;
      }
      const listed = new Set((await this.listPublished()).routes.map(routeKey));
      const left = batch.filter((route) => listed.has(routeKey(route)));
      if (left.length === 0) continue;
      try {
        await this.send(left.map((route): RouteChange => ['DELETE', route]));
        withdrawn += left.length;
      } catch (error) {
        if (!isInvalidChangeBatch(error)) throw error;
        for (const route of left) if (await this.withdraw(route)) withdrawn += 1;
      }
    }
    return withdrawn;
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

  /**
   * Lowers the zone's negative-caching TTL to `seconds` when it is higher: the SOA record's last
   * field (RFC 1035, section 3.3.13), the rest kept as Route 53 wrote it. CloudFormation cannot:
   * AWS::Route53::HostedZone has no SOA property, and a record set of the SOA would be a CREATE
   * of a record the zone already holds (InvalidChangeBatch, "already exists",
   * https://docs.aws.amazon.com/Route53/latest/APIReference/API_ChangeResourceRecordSets.html);
   * an UPSERT can. Answers whether it changed the record.
   */
  async limitNegativeCaching(seconds = NEGATIVE_ANSWER_TTL_SECONDS): Promise<boolean> {
    const page = await this.client.send(
      new ListResourceRecordSetsCommand({
        HostedZoneId: this.settings.hostedZoneId,
        StartRecordName: this.settings.zoneName,
        StartRecordType: 'SOA',
        MaxItems: 1,
      }),
    );
    const soa = page.ResourceRecordSets?.find(
      (record) => record.Type === 'SOA' && withoutDot(record.Name ?? '') === this.settings.zoneName,
    );
    const fields = soa?.ResourceRecords?.[0]?.Value?.trim().split(/\s+/) ?? [];
    const minimum = Number(fields[6]);
    if (!soa || fields.length !== 7 || !Number.isFinite(minimum))
      throw new Error(`The zone ${this.settings.zoneName} has no SOA record to read`);
    if (Math.min(soa.TTL ?? minimum, minimum) <= seconds) return false;
    await this.client.send(
      new ChangeResourceRecordSetsCommand({
        HostedZoneId: this.settings.hostedZoneId,
        ChangeBatch: {
          Comment: `UPSERT SOA: negative answers cached ${seconds} s`,
          Changes: [
            {
              Action: 'UPSERT',
              ResourceRecordSet: {
                Name: soa.Name,
                Type: 'SOA',
                TTL: soa.TTL,
                ResourceRecords: [{ Value: [...fields.slice(0, 6), String(seconds)].join(' ') }],
              },
            },
          ],
        },
      }),
    );
    return true;
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

  private async send(routes: readonly RouteChange[]): Promise<void> {
    const [head] = routes;
    if (!head) return;
    const changes = routes.flatMap(([action, route]) => this.changesOf(action, route));
    const [action, first] = head;
    const same = routes.every(([other]) => other === action);
    const comment =
      routes.length === 1
        ? `${action} ${first.hostname} task ${first.taskId}`
        : same
          ? `${action} ${routes.length} task routes`
          : `${routes.filter(([other]) => other === 'DELETE').length} DELETE, ${routes.filter(([other]) => other === 'UPSERT').length} UPSERT task routes`;
    await this.client.send(
      new ChangeResourceRecordSetsCommand({
        HostedZoneId: this.settings.hostedZoneId,
        ChangeBatch: { Comment: comment, Changes: changes },
      }),
    );
  }

  private changesOf(action: 'UPSERT' | 'DELETE', route: AppRoute): Change[] {
    const target = this.taskAddressName(route.taskId);
    return [
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
  }
}

type RouteChange = ['UPSERT' | 'DELETE', AppRoute];

/** A route's records exactly as a DELETE must name them. */
const routeKey = (route: AppRoute): string => `${route.containerId}.${route.taskId} ${route.hostname}:${route.port} ${route.ip}`;

const isInvalidChangeBatch = (error: unknown): boolean => error instanceof Error && error.name === 'InvalidChangeBatch';

function batchesOf<T>(items: readonly T[]): T[][] {
  const batches: T[][] = [];
  for (let start = 0; start < items.length; start += ROUTES_PER_BATCH) batches.push(items.slice(start, start + ROUTES_PER_BATCH));
  return batches;
}

const withoutDot = (name: string): string => (name.endsWith('.') ? name.slice(0, -1) : name);
