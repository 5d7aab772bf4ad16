import { gzipSync } from 'node:zlib';
import type { LogsSubscriptionEvent } from '../../lib/aws/access-log-activity.js';

/** A delivery as CloudWatch Logs sends it to a subscribed function: base64 of gzip of JSON. */
export function logsDelivery(lines: Array<{ message: string; timestamp?: number }>, messageType = 'DATA_MESSAGE'): LogsSubscriptionEvent {
  const payload = {
    messageType,
    owner: '123456789012',
    logGroup: 'proxy-logs',
    logStream: 'proxy/caddy/1',
    subscriptionFilters: ['requests'],
    logEvents: lines.map((line, index) => ({ id: String(index), timestamp: line.timestamp ?? Date.now(), message: line.message })),
  };
  return { awslogs: { data: gzipSync(Buffer.from(JSON.stringify(payload))).toString('base64') } };
}

/** One Caddy access log line (infra/proxy/Caddyfile `log { format json }`). */
export const caddyLine = (host: string, atMs: number): string =>
  JSON.stringify({
    level: 'info',
    ts: atMs / 1000,
    logger: 'http.log.access.log0',
    msg: 'handled request',
    request: { remote_ip: '10.0.1.5', proto: 'HTTP/1.1', method: 'GET', host, uri: '/' },
    status: 200,
  });
