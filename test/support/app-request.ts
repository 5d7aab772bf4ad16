import { type IncomingMessage, request } from 'node:http';
import type { Readable } from 'node:stream';

export interface AppResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A response read whole as text, for `request`'s callback. */
export function readWhole(resolve: (answer: AppResponse) => void, reject: (error: Error) => void): (response: IncomingMessage) => void {
  return (response) => {
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.on('end', () =>
      resolve({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString('utf8') }),
    );
    response.on('error', reject);
  };
}

/**
 * A request to `http://{hostname}.localhost:{port}{path}` on the local stack. Browsers resolve
 * *.localhost to loopback themselves; Node's resolver may not, so this connects to 127.0.0.1 and
 * sends the Host header a browser would.
 */
export function appRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Readable } = {},
): Promise<AppResponse> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: '127.0.0.1',
        port: target.port,
        method: options.method ?? 'GET',
        path: `${target.pathname}${target.search}`,
        headers: { host: target.host, ...options.headers },
      },
      readWhole(resolve, reject),
    );
    outgoing.on('error', reject);
    if (options.body === undefined || typeof options.body === 'string') outgoing.end(options.body);
    else options.body.pipe(outgoing);
  });
}
