import type { Route53Sim } from './route53.js';

/** One answer of the resolver, as a client in the VPC sees it. */
export interface ResolvedAnswer {
  /** The record values (empty for a negative answer). */
  values: string[];
  /** NXDOMAIN: no record of any type has the name; NODATA: the name has records, none of the type asked. */
  negative?: 'NXDOMAIN' | 'NODATA';
  /** Whether the answer came from the resolver's cache rather than from the zone. */
  cached: boolean;
  /** Seconds the resolver keeps the answer. */
  ttlSeconds: number;
}

/**
 * The Amazon-provided VPC resolver (Route 53 Resolver at the VPC's base + 2) in front of one
 * private hosted zone, with the cache that matters to a wake: a positive answer is kept for its
 * record's TTL, a negative one (NXDOMAIN, NODATA) for the zone's negative-caching TTL, the lesser
 * of the SOA record's own TTL and its last field, the minimum TTL (RFC 2308, section 5; Route 53:
 * "NS and SOA records that Amazon Route 53 creates for a public hosted zone",
 * https://docs.aws.amazon.com/Route53/latest/DeveloperGuide/SOA-NSrecords.html, which gives a new
 * zone's SOA TTL 900 and minimum 86400). The SOA is read from the zone when the negative answer
 * is cached, so a change of the SOA through ChangeResourceRecordSets applies to later answers only,
 * as on AWS. A record changed in the zone is seen once the cached answer expires, not before.
 *
 * Limits of the model: one zone; no cap on TTLs (the resolver is reported to cap what it answers
 * at 300 s, https://repost.aws/questions/QUvpuFJT94QXefYL1jJuvKTw/how-to-change-ttl-of-aws-local-dns-resolver:
 * even so a new zone's absence would be kept for 5 minutes); no per-interface packet limit.
 */
export class VpcResolverSim {
  private readonly cache = new Map<string, { answer: Omit<ResolvedAnswer, 'cached'>; until: number }>();
  /** Queries answered from the zone and from the cache. */
  readonly lookups = { fromZone: 0, fromCache: 0 };

  constructor(
    private readonly zone: Route53Sim,
    private readonly now: () => number = Date.now,
  ) {}

  /** Resolves `name` (without the trailing dot) for `type` ('SRV', 'A', …). */
  resolve(name: string, type: string): ResolvedAnswer {
    const lower = name.toLowerCase().replace(/\.$/, '');
    const now = this.now();
    // RFC 2308, section 5: an NXDOMAIN is cached for the name (every type), a NODATA for the name and type.
    for (const key of [`${lower}|*`, `${lower}|${type}`]) {
      const hit = this.cache.get(key);
      if (hit && hit.until > now) {
        this.lookups.fromCache += 1;
        return { ...hit.answer, cached: true };
      }
    }
    this.lookups.fromZone += 1;
    const values = this.zone.values(lower, type);
    if (values.length > 0) {
      const ttlSeconds = this.zone.ttlOf(lower, type) ?? 0;
      const answer = { values, ttlSeconds };
      this.cache.set(`${lower}|${type}`, { answer, until: now + ttlSeconds * 1000 });
      return { ...answer, cached: false };
    }
    const negative = this.zone.hasName(lower) ? 'NODATA' : 'NXDOMAIN';
    const answer: Omit<ResolvedAnswer, 'cached'> = { values: [], negative, ttlSeconds: this.negativeTtlSeconds() };
    this.cache.set(negative === 'NXDOMAIN' ? `${lower}|*` : `${lower}|${type}`, { answer, until: now + answer.ttlSeconds * 1000 });
    return { ...answer, cached: false };
  }

  /** The lesser of the SOA record's TTL and its minimum field, as the zone holds it now. */
  negativeTtlSeconds(): number {
    const soa = this.zone.soa();
    return Math.min(soa.ttlSeconds, soa.minimumSeconds);
  }
}
