import { randomUUID } from 'node:crypto';
import { AwsError, type FaultCounts } from './faults.js';
import type { SeededRandom } from './rng.js';
import { TokenBucket } from './token-bucket.js';

export interface Route53SimOptions {
  /**
   * The request-rate bucket for the account. Route 53 long answered `Throttling` past five
   * requests a second per account (https://repost.aws/knowledge-center/route-53-avoid-throttling-errors);
   * its updated limits are a bucket of 50 refilled at 10/s
   * (https://docs.aws.amazon.com/Route53/latest/DeveloperGuide/throttling-api-requests.html).
   * Default: the stricter 5/s.
   */
  requestsPerSecond?: { capacity: number; refillPerSecond: number };
  /**
   * How long a change batch keeps its zone busy: a change to the same zone meanwhile is refused
   * with `PriorRequestNotComplete` (same pages).
   */
  changeBusyMs?: number;
  /** Probability that a change is refused with PriorRequestNotComplete even when the zone is idle (another writer's change). */
  priorRequestRate?: number;
}

interface RecordSet {
  Name: string;
  Type: string;
  SetIdentifier?: string;
  Weight?: number;
  TTL?: number;
  ResourceRecords: string[];
}

const NS = 'https://route53.amazonaws.com/doc/2013-04-01/';
const xmlEscape = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
const xmlUnescape = (text: string) => text.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
const tag = (xml: string, name: string) => {
  const match = new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(xml);
  return match ? xmlUnescape(match[1]!) : undefined;
};
const tags = (xml: string, name: string) => [...xml.matchAll(new RegExp(`<${name}>([\\s\\S]*?)</${name}>`, 'g'))].map((m) => m[1]!);
const withDot = (name: string) => (name.endsWith('.') ? name : `${name}.`);
/** Route 53's order: names with their labels reversed, then type, then SetIdentifier. */
const keyOf = (set: { Name: string; Type: string; SetIdentifier?: string | undefined }) =>
  `${set.Name.replace(/\.$/, '').split('.').reverse().join('.')}|${set.Type}|${set.SetIdentifier ?? ''}`;

/**
 * One private hosted zone over restXml, as lib/aws/route53-routes.ts uses it:
 * ChangeResourceRecordSets (a batch applies all or nothing; a DELETE must name a set's values
 * exactly; CREATE of an existing set fails: InvalidChangeBatch,
 * https://docs.aws.amazon.com/Route53/latest/APIReference/API_ChangeResourceRecordSets.html) and
 * ListResourceRecordSets (name order, continued from NextRecordName/Type/Identifier,
 * https://docs.aws.amazon.com/Route53/latest/APIReference/API_ListResourceRecordSets.html), with
 * `Throttling` and `PriorRequestNotComplete`.
 */
export class Route53Sim {
  readonly sets = new Map<string, RecordSet>();
  private readonly bucket: TokenBucket;
  private busyUntil = 0;
  readonly changes: string[] = [];

  constructor(
    readonly zoneId: string,
    readonly zoneName: string,
    private readonly options: Route53SimOptions,
    private readonly random: SeededRandom,
    private readonly faults: FaultCounts,
  ) {
    const rate = options.requestsPerSecond ?? { capacity: 5, refillPerSecond: 5 };
    this.bucket = new TokenBucket(rate.capacity, rate.refillPerSecond);
    // A private zone's SOA as Route 53 creates it: TTL 900, minimum 86400
    // (https://docs.aws.amazon.com/Route53/latest/DeveloperGuide/SOA-NSrecords.html).
    this.sets.set(keyOf({ Name: `${zoneName}.`, Type: 'SOA' }), {
      Name: `${zoneName}.`,
      Type: 'SOA',
      TTL: 900,
      ResourceRecords: ['ns-1536.awsdns-00.co.uk. awsdns-hostmaster.amazon.com. 1 7200 900 1209600 86400'],
    });
    this.sets.set(keyOf({ Name: `${zoneName}.`, Type: 'NS' }), { Name: `${zoneName}.`, Type: 'NS', TTL: 172800, ResourceRecords: ['ns'] });
  }

  /** Answers the XML body of the response, or throws AwsError. */
  handle(method: string, path: string, query: URLSearchParams, body: string): string {
    const match = /^\/2013-04-01\/hostedzone\/([^/]+)\/rrset\/?$/.exec(path);
    if (!match) throw new AwsError('InvalidInput', `The simulator does not model ${method} ${path}`);
    if (match[1] !== this.zoneId) throw new AwsError('NoSuchHostedZone', `No hosted zone found with ID: ${match[1]}`, 404);
    if (!this.bucket.take()) {
      this.faults.add('route53.Throttling');
      throw new AwsError('Throttling', 'Rate exceeded');
    }
    return method === 'POST' ? this.change(body) : this.list(query);
  }

  private change(body: string): string {
    const now = Date.now();
    if (now < this.busyUntil || this.random.chance(this.options.priorRequestRate ?? 0)) {
      this.faults.add('route53.PriorRequestNotComplete');
      throw new AwsError('PriorRequestNotComplete', 'The request was rejected because Route 53 was still processing a prior request.');
    }
    const next = new Map(this.sets);
    for (const change of tags(body, 'Change')) {
      const action = tag(change, 'Action');
      const xml = tag(change, 'ResourceRecordSet') ?? '';
      const set: RecordSet = {
        Name: withDot(tag(xml, 'Name') ?? ''),
        Type: tag(xml, 'Type') ?? '',
        ...(tag(xml, 'SetIdentifier') !== undefined ? { SetIdentifier: tag(xml, 'SetIdentifier')! } : {}),
        ...(tag(xml, 'Weight') !== undefined ? { Weight: Number(tag(xml, 'Weight')) } : {}),
        ...(tag(xml, 'TTL') !== undefined ? { TTL: Number(tag(xml, 'TTL')) } : {}),
        ResourceRecords: tags(xml, 'ResourceRecord').map((record) => tag(record, 'Value') ?? ''),
      };
      const key = keyOf(set);
      const current = next.get(key);
      if (action === 'DELETE') {
        if (!current || JSON.stringify(current) !== JSON.stringify(set)) {
          throw new AwsError(
            'InvalidChangeBatch',
            `[Tried to delete resource record set [name='${set.Name}', type='${set.Type}'${set.SetIdentifier ? `, set-identifier='${set.SetIdentifier}'` : ''}] but it was not found]`,
          );
        }
        next.delete(key);
      } else if (action === 'CREATE' && current) {
        throw new AwsError(
          'InvalidChangeBatch',
          `[Tried to create resource record set [name='${set.Name}', type='${set.Type}'] but it already exists]`,
        );
      } else {
        next.set(key, set);
      }
    }
    this.sets.clear();
    for (const [key, value] of next) this.sets.set(key, value);
    this.busyUntil = now + (this.options.changeBusyMs ?? 0);
    this.changes.push(tag(body, 'Comment') ?? '');
    return `<?xml version="1.0"?><ChangeResourceRecordSetsResponse xmlns="${NS}"><ChangeInfo><Id>/change/C${randomUUID().slice(0, 12).toUpperCase()}</Id><Status>PENDING</Status><SubmittedAt>${new Date(now).toISOString()}</SubmittedAt></ChangeInfo></ChangeResourceRecordSetsResponse>`;
  }

  private list(query: URLSearchParams): string {
    const ordered = [...this.sets.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const name = query.get('name');
    const startKey = name
      ? keyOf({ Name: withDot(name), Type: query.get('type') ?? '', SetIdentifier: query.get('identifier') ?? '' })
      : '';
    const rest = ordered.filter(([key]) => key >= startKey);
    const size = Math.min(Number(query.get('maxitems') ?? 300), 300);
    const page = rest.slice(0, size).map(([, set]) => set);
    const following = rest[size]?.[1];
    const setXml = (set: RecordSet) =>
      `<ResourceRecordSet><Name>${xmlEscape(set.Name)}</Name><Type>${set.Type}</Type>${set.SetIdentifier ? `<SetIdentifier>${xmlEscape(set.SetIdentifier)}</SetIdentifier>` : ''}${set.Weight !== undefined ? `<Weight>${set.Weight}</Weight>` : ''}${set.TTL !== undefined ? `<TTL>${set.TTL}</TTL>` : ''}<ResourceRecords>${set.ResourceRecords.map((value) => `<ResourceRecord><Value>${xmlEscape(value)}</Value></ResourceRecord>`).join('')}</ResourceRecords></ResourceRecordSet>`;
    return `<?xml version="1.0"?><ListResourceRecordSetsResponse xmlns="${NS}"><ResourceRecordSets>${page.map(setXml).join('')}</ResourceRecordSets><IsTruncated>${following !== undefined}</IsTruncated>${following ? `<NextRecordName>${xmlEscape(following.Name)}</NextRecordName><NextRecordType>${following.Type}</NextRecordType>${following.SetIdentifier ? `<NextRecordIdentifier>${xmlEscape(following.SetIdentifier)}</NextRecordIdentifier>` : ''}` : ''}<MaxItems>${size}</MaxItems></ListResourceRecordSetsResponse>`;
  }

  /** The values of the record sets of a name (without the trailing dot) and type. */
  values(name: string, type: string): string[] {
    return [...this.sets.values()].filter((set) => set.Name === `${name}.` && set.Type === type).flatMap((set) => set.ResourceRecords);
  }

  /** The TTL of the record sets of a name (without the trailing dot) and type: the least, as a resolver caches them together. */
  ttlOf(name: string, type: string): number | undefined {
    const ttls = [...this.sets.values()].filter((set) => set.Name === `${name}.` && set.Type === type).map((set) => set.TTL ?? 0);
    return ttls.length > 0 ? Math.min(...ttls) : undefined;
  }

  /** Whether any record set has the name (without the trailing dot): a query of another type is NODATA, not NXDOMAIN. */
  hasName(name: string): boolean {
    return [...this.sets.values()].some((set) => set.Name === `${name}.`);
  }

  /** The zone's SOA record: its TTL and its last field, the minimum TTL (RFC 1035, section 3.3.13). */
  soa(): { ttlSeconds: number; minimumSeconds: number } {
    const set = this.sets.get(keyOf({ Name: `${this.zoneName}.`, Type: 'SOA' }));
    const minimum = Number(set?.ResourceRecords[0]?.trim().split(/\s+/)[6]);
    return { ttlSeconds: set?.TTL ?? 0, minimumSeconds: Number.isFinite(minimum) ? minimum : 0 };
  }

  /** Task routes: SRV SetIdentifier `{container id}.{task id}` → the A record's address. */
  routes(): Array<{ containerId: string; taskId: string; hostname: string; ip: string | undefined }> {
    const suffix = `.${this.zoneName}.`;
    return [...this.sets.values()]
      .filter((set) => set.Type === 'SRV' && set.SetIdentifier)
      .map((set) => {
        const [containerId, taskId] = set.SetIdentifier!.split('.');
        const target = /^0 0 \d+ (\S+?)\.?$/.exec(set.ResourceRecords[0] ?? '')?.[1];
        const address = target ? this.sets.get(keyOf({ Name: withDot(target), Type: 'A' }))?.ResourceRecords[0] : undefined;
        return { containerId: containerId!, taskId: taskId!, hostname: set.Name.slice('_http._tcp.'.length, -suffix.length), ip: address };
      });
  }
}

export const route53ErrorXml = (code: string, message: string): string =>
  `<?xml version="1.0"?><ErrorResponse xmlns="${NS}"><Error><Type>Sender</Type><Code>${code}</Code><Message>${xmlEscape(message)}</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`;
