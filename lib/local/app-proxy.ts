import { Agent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { StoredContainer } from '../containers/container.js';
import { escapeHtml } from '../http/reply.js';
import { describeError, log } from '../log.js';

/** What the proxy needs to find a hostname's process. */
export interface AppRouting {
  containerIdOfHostname(hostname: string): Promise<string | undefined>;
  container(containerId: string): Promise<StoredContainer | undefined>;
  /** The loopback port of a running local task's process. */
  portOf(taskArn: string): number | undefined;
}

/** `{hostname}.localhost[:port]`, the local stack's container addresses (browsers resolve *.localhost to loopback). */
const APP_HOST = /^([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)\.localhost\.?(?::\d{1,5})?$/i;

/** The container hostname a Host header names, or undefined when it names the API itself. */
export function appHostnameOf(host: string | undefined): string | undefined {
  return host ? APP_HOST.exec(host)?.[1]?.toLowerCase() : undefined;
}

/** Connections to the container processes are reused, as a reverse proxy's upstream pool would. */
const upstreamAgent = new Agent({ keepAlive: true, maxFreeSockets: 16 });

/**
 * The task a hostname was last routed to. A hostname names the same container until that
 * container is deleted, and while the container's task runs locally, nothing routes it
 * elsewhere (stop, restart and delete all end that task first). So while the remembered task
 * runs, requests go to it without reading the table; otherwise the table is read again.
 */
const routedTaskByHostname = new Map<string, { containerId: string; taskArn: string }>();
const MAX_REMEMBERED_HOSTNAMES = 1000;

type Route = { kind: 'running'; port: number } | { kind: 'unavailable'; container: StoredContainer } | { kind: 'unknown' };

async function routeFor(hostname: string, routing: AppRouting): Promise<Route> {
  const remembered = routedTaskByHostname.get(hostname);
  const rememberedPort = remembered ? routing.portOf(remembered.taskArn) : undefined;
  if (rememberedPort !== undefined) return { kind: 'running', port: rememberedPort };
  routedTaskByHostname.delete(hostname);

  const containerId = remembered?.containerId ?? (await routing.containerIdOfHostname(hostname));
  let container = containerId ? await routing.container(containerId) : undefined;
  // The remembered container was deleted; the hostname may belong to a new one.
  if (!container && remembered) {
    const current = await routing.containerIdOfHostname(hostname);
    container = current ? await routing.container(current) : undefined;
  }
  if (!container) return { kind: 'unknown' };
  const port = container.state === 'running' && container.taskArn ? routing.portOf(container.taskArn) : undefined;
  if (port === undefined) return { kind: 'unavailable', container };
  if (routedTaskByHostname.size < MAX_REMEMBERED_HOSTNAMES) {
    routedTaskByHostname.set(hostname, { containerId: container.id, taskArn: container.taskArn! });
  }
  return { kind: 'running', port };
}

/** How long a client should wait before asking a container that is not running again. */
const RETRY_AFTER_SECONDS = 5;

/** RFC 9110 section 7.6.1: connection-specific fields a proxy must not forward. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'upgrade',
]);

function forwardable(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const listed = String(headers.connection ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase());
  return Object.fromEntries(
    Object.entries(headers).filter(([name, value]) => value !== undefined && !HOP_BY_HOP.has(name) && !listed.includes(name)),
  );
}

/**
 * Forwards a request for `{hostname}.localhost` to the container's process, as the load balancer
 * and proxy fleet do on AWS (docs/containers.md): every method, bodies streamed both ways, and
 * X-Forwarded-For, -Proto and -Host set. A container that is not running answers 503 with
 * Retry-After and its state; an unknown hostname 404.
 */
export async function proxyToContainer(
  request: IncomingMessage,
  response: ServerResponse,
  hostname: string,
  routing: AppRouting,
): Promise<void> {
  const route = await routeFor(hostname, routing);
  if (route.kind === 'unknown') {
    sendPage(response, 404, `No container is named ${hostname}`, 'Check the hostname, or create a container with it.');
    return;
  }
  if (route.kind === 'unavailable') {
    response.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
    const state = route.container.state === 'running' ? 'starting' : route.container.state;
    sendPage(response, 503, `${hostname} is ${state}`, 'It answers here once it runs; start it through the API.');
    return;
  }
  const { port } = route;

  const sourceIp = (request.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
  const headers = forwardable(request.headers);
  const priorFor = request.headers['x-forwarded-for'];
  headers['x-forwarded-for'] = priorFor ? `${priorFor}, ${sourceIp}` : sourceIp;
  headers['x-forwarded-proto'] = 'http';
  headers['x-forwarded-host'] = request.headers.host;

  await new Promise<void>((resolve) => {
    const upstream = httpRequest({ host: '127.0.0.1', port, method: request.method, path: request.url, headers, agent: upstreamAgent });
    upstream.on('response', (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.statusMessage, forwardable(answer.headers));
      answer.pipe(response);
      answer.on('end', resolve);
      answer.on('error', () => {
        response.destroy();
        resolve();
      });
    });
    upstream.on('error', (error) => {
      log.warn('Proxying to a local container failed', { hostname, ...describeError(error) });
      if (!response.headersSent) sendPage(response, 502, `${hostname} did not answer`, 'Its process is not listening on $PORT.');
      else response.destroy();
      resolve();
    });
    // A client that goes away takes the upstream request with it.
    response.on('close', () => {
      if (!response.writableFinished) upstream.destroy();
      resolve();
    });
    request.pipe(upstream);
  });
}

function sendPage(response: ServerResponse, status: number, title: string, detail: string): void {
  response.statusCode = status;
  response.setHeader('Content-Type', 'text/html; charset=utf-8');
  response.setHeader('Cache-Control', 'no-store');
  response.end(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>` +
      `<body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(detail)}</p></body></html>\n`,
  );
}
