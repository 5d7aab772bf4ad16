import { gunzipSync } from 'node:zlib';
import type { RequestActivity } from '../containers/idle-sleep.js';
import { hostnameUnder } from './apps-domain-host.js';

/**
 * A CloudWatch Logs subscription's delivery to Lambda: `awslogs.data` is base64 of gzip of JSON
 * with `messageType` (`DATA_MESSAGE`, or `CONTROL_MESSAGE` when Logs checks the destination) and
 * `logEvents` of `{ id, timestamp, message }`
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/SubscriptionFilters.html#LambdaFunctionExample).
 */
export interface LogsSubscriptionEvent {
  awslogs?: { data?: string };
}

/**
 * Each container hostname's last request in one delivery of the proxy's access log: Caddy writes
 * one JSON line per request (infra/proxy/Caddyfile, `log`) with `request.host` and `ts` (seconds).
 * Lines that are not access lines, or whose host is not one label under the apps domain, are
 * skipped; a payload that does not decode answers nothing (throws), since a retry cannot mend it.
 */
export function lastRequestsIn(event: LogsSubscriptionEvent, appsDomain: string): Map<string, number> {
  const data = event.awslogs?.data;
  if (typeof data !== 'string') throw new Error('Not a CloudWatch Logs subscription event');
  const payload: unknown = JSON.parse(gunzipSync(Buffer.from(data, 'base64')).toString('utf8'));
  const last = new Map<string, number>();
  if (!isRecord(payload) || payload.messageType !== 'DATA_MESSAGE' || !Array.isArray(payload.logEvents)) return last;
  for (const logEvent of payload.logEvents) {
    if (!isRecord(logEvent)) continue;
    const line = parseLine(logEvent.message);
    const hostname = hostnameUnder(line?.host, appsDomain);
    if (!hostname) continue;
    const at = typeof line?.ts === 'number' ? Math.round(line.ts * 1000) : logEvent.timestamp;
    if (typeof at !== 'number' || !Number.isFinite(at)) continue;
    last.set(hostname, Math.max(last.get(hostname) ?? 0, at));
  }
  return last;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/** A Caddy access line's time (`ts`, seconds) and `request.host`; undefined for any other line. */
function parseLine(message: unknown): { ts: unknown; host: string | undefined } | undefined {
  if (typeof message !== 'string' || !message.startsWith('{')) return undefined;
  try {
    const parsed: unknown = JSON.parse(message);
    if (!isRecord(parsed)) return undefined;
    const { request } = parsed;
    return { ts: parsed.ts, host: isRecord(request) && typeof request.host === 'string' ? request.host : undefined };
  } catch {
    return undefined;
  }
}

/** How long a hostname's container (or its absence) is trusted: a hostname is taken again only after its container is deleted. */
const HOSTNAME_MEMORY_MS = 60_000;
const MAX_REMEMBERED_HOSTNAMES = 10_000;

/**
 * The access-log side of idleness on AWS (docs/routing.md, "Sleep and wake on AWS"): each
 * delivery's requests become `last_request_at` writes through RequestActivity, at most one a
 * minute per container in each warm instance. A hostname's container is looked up through the
 * hostname item (a GetItem, never a Scan) and remembered for a minute.
 */
export class AccessLogActivity {
  private readonly containerOf = new Map<string, { containerId: string | undefined; readAt: number }>();

  constructor(
    private readonly parts: {
      appsDomain: string;
      containerIdOfHostname(hostname: string): Promise<string | undefined>;
      activity: Pick<RequestActivity, 'seen'>;
      now?: () => number;
    },
  ) {}

  /**
   * Records one delivery; answers how many containers it saw a request for, or `malformed` for a
   * payload that does not decode. A failed lookup throws, so Lambda tries the delivery again.
   */
  async record(event: LogsSubscriptionEvent): Promise<number | 'malformed'> {
    let requests: Map<string, number>;
    try {
      requests = lastRequestsIn(event, this.parts.appsDomain);
    } catch {
      return 'malformed';
    }
    let containers = 0;
    await Promise.all(
      [...requests].map(async ([hostname, at]) => {
        const containerId = await this.lookUp(hostname);
        if (!containerId) return;
        containers += 1;
        await this.parts.activity.seen(containerId, at);
      }),
    );
    return containers;
  }

  private async lookUp(hostname: string): Promise<string | undefined> {
    const now = (this.parts.now ?? Date.now)();
    const remembered = this.containerOf.get(hostname);
    if (remembered && now - remembered.readAt < HOSTNAME_MEMORY_MS) return remembered.containerId;
    const containerId = await this.parts.containerIdOfHostname(hostname);
    if (this.containerOf.size >= MAX_REMEMBERED_HOSTNAMES) this.containerOf.clear();
    this.containerOf.set(hostname, { containerId, readAt: now });
    return containerId;
  }
}
