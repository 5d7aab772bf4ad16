import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The third-party application's side: a loopback server that receives the browser after consent. */
export interface CallbackServer {
  redirectUri: string;
  received: URL[];
  close(): Promise<void>;
}

/** `host`: the loopback address it listens on, `::1` for a native app's IPv6 redirect URI (RFC 8252 section 7.3). */
export async function startCallbackServer(host: '127.0.0.1' | '::1' = '127.0.0.1'): Promise<CallbackServer> {
  const received: URL[] = [];
  let origin = '';
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', origin);
    // Browsers also ask for /favicon.ico; only the redirect itself counts.
    if (url.pathname !== '/callback') {
      response.writeHead(404).end();
      return;
    }
    received.push(url);
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    // An icon of its own: Chromium would ask for /favicon.ico and log the 404 as a console error (test/e2e/console-edges-browser.test.ts).
    response.end('<!doctype html><link rel="icon" href="data:,"><title>Callback</title><p>Back at the application.</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  origin = `http://${host.includes(':') ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`;
  return {
    redirectUri: `${origin}/callback`,
    received,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
