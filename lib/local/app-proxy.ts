// Over 300 lines because it stands in for the load balancer, Caddy and the wake endpoint at once: routing by
// Host, streaming both ways, sending an idempotent request again, and holding requests through a wake, a swap or a start.
import { Agent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { StoredContainer } from '../containers/container.js';
import { ConflictError, ForbiddenError, QuotaExceededError, TimeoutError } from '../errors.js';
import { type AppAnswer, appPage, HOP_BY_HOP, refusedAnswer, startingAnswer, wakeRefusalOf } from '../http/app-pages.js';
import { describeError, log } from '../log.js';
import { inFlightRequests } from './in-flight-requests.js';
import type { TaskAddress } from './task-book.js';

/** What the proxy needs to find a hostname's process. */
export interface AppRouting {
  containerIdOfHostname(hostname: string): Promise<string | undefined>;
  container(containerId: string): Promise<StoredContainer | undefined>;
  /** Where a running local task's app answers. */
  addressOf(taskArn: string): TaskAddress | undefined;
  /** A request for the container arrived (its idleness, lib/containers/idle-sleep.ts). */
  requestSeen?(containerId: string): void;
  /** Calls `listener` after a task status of a container was applied to its record in this process; answers how to stop. */
  onContainerChanged?(listener: (containerId: string) => void): () => void;
  /** Wakes sleeping containers on request (docs/routing.md, "Sleep and wake"); without it a sleeping one answers 503. */
  waking?: Waking;
}

/** How the proxy wakes a sleeping container. */
export interface Waking {
  /** Whether the container sleeps (stopped by its idle timeout); stopped on purpose, or failed, it never wakes by request. */
  sleeps(container: StoredContainer): boolean;
  /**
   * Starts the container as its owner and answers once it runs (SleepingContainerService.wake);
   * throws as a start would. `read` is the record as the proxy read it: the start commits on its
   * version, so reading it again would only delay the engine's start.
   */
  wake(containerId: string, read?: StoredContainer): Promise<unknown>;
  /** Records the wake's time, from its first request's arrival to that request's first answer byte. */
  recordWake(containerId: string, wakeMs: number): Promise<void>;
  /** How long a request is held for a wake or a start (WAKE_BUDGET_S) before it is answered that the app is starting. */
  budgetMs: number;
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
 * The task a hostname was last routed to, and when the table said so. A restart moves a
 * container to a new task and then stops the old one, so a remembered task is trusted only for
 * `ROUTE_MEMORY_MS`, as the proxy fleet on AWS trusts a DNS answer for its TTL, and only while it
 * is routable; after that, or once its stop began, the table is read again.
 */
const routedTaskByHostname = new Map<string, { containerId: string; taskArn: string; readAt: number }>();
const MAX_REMEMBERED_HOSTNAMES = 1000;
/** How long a route read from the table is used without reading it again (a stopping task's is dropped at once). */
export const ROUTE_MEMORY_MS = 250;

type Route =
  /** `sent` ends the request's count of the task's requests in flight (lib/local/in-flight-requests.ts). */
  | { kind: 'running'; address: TaskAddress; containerId: string; taskArn: string; sent: () => void }
  | { kind: 'unavailable'; container: StoredContainer }
  | { kind: 'unknown' };

/**
 * The route to a task that runs, counted in flight from this moment: the check that it runs and
 * the count happen in one turn, so a stop (which takes the task out of the routes first) either
 * comes before and the task is not chosen, or after and waits for this request.
 */
function routeToTask(taskArn: string, containerId: string, routing: AppRouting): (Route & { kind: 'running' }) | undefined {
  const address = routing.addressOf(taskArn);
  if (address === undefined) return undefined;
  return { kind: 'running', address, containerId, taskArn, sent: inFlightRequests.begin(taskArn) };
}

/**
 * A hostname whose container was read while its task starts (`provisioning`, neither a swap nor a
 * wake: those hold their requests), answered 503 without reading the table again for
 * `ROUTE_MEMORY_MS`, and only until a task status of that container is applied in this process
 * (AppRouting.onContainerChanged), its RUNNING among them. Each such request read the table twice:
 * a client asking every 5 ms while a new container started kept DynamoDB Local, on the cores the
 * engine's start needs, busy enough to slow that start by 100 to 150 ms (docs/measurements.md,
 * "A new container at the engine's pace"). On AWS such a request reaches no table at all.
 */
const startingByHostname = new Map<string, { container: StoredContainer; readAt: number; changed?: boolean }>();
const forgettingStarting = new WeakSet<AppRouting>();

function rememberStarting(hostname: string, container: StoredContainer, routing: AppRouting): void {
  if (!routing.onContainerChanged || !startsOnItsOwn(container)) return;
  if (!forgettingStarting.has(routing)) {
    forgettingStarting.add(routing);
    routing.onContainerChanged((containerId) => {
      for (const entry of startingByHostname.values()) if (entry.container.id === containerId) entry.changed = true;
    });
  }
  if (startingByHostname.size < MAX_REMEMBERED_HOSTNAMES) startingByHostname.set(hostname, { container, readAt: Date.now() });
}

/**
 * The 503 of a starting container while its memory holds; once it no longer does, the container id
 * its hostname named, so the read that follows (the one that finds it running) reads the record only.
 */
function rememberedStarting(hostname: string, routing: AppRouting): { route?: Route; containerId?: string } | undefined {
  const entry = startingByHostname.get(hostname);
  if (!entry) return undefined;
  const started = startedTaskOf(entry.container, routing);
  if (started) {
    startingByHostname.delete(hostname);
    return { route: started };
  }
  if (!entry.changed && Date.now() - entry.readAt < ROUTE_MEMORY_MS && !wakes.has(entry.container.id))
    return { route: { kind: 'unavailable', container: entry.container } };
  startingByHostname.delete(hostname);
  return { containerId: entry.container.id };
}

/**
 * The task of a starting container (`provisioning`, neither a swap nor a wake: those hold their
 * requests and route once they end) that its runtime serves already: the runtime counts a task
 * running, and gives its address, only once it answers and the host rules were checked after its
 * network was set up (lib/local/docker-runtime.ts), so it is sent requests from then on, as a
 * load balancer sends them to a target once its health check passes, without waiting for the
 * record's RUNNING to be written and read again (docs/measurements.md, "A new container at the
 * engine's pace, again").
 */
function startedTaskOf(container: StoredContainer, routing: AppRouting): (Route & { kind: 'running' }) | undefined {
  if (!startsOnItsOwn(container) || !container.taskArn) return undefined;
  return routeToTask(container.taskArn, container.id, routing);
}

async function routeFor(hostname: string, routing: AppRouting): Promise<Route> {
  const starting = rememberedStarting(hostname, routing);
  if (starting?.route?.kind === 'running') return rememberRoute(hostname, starting.route);
  if (starting?.route) return starting.route;
  const remembered = routedTaskByHostname.get(hostname);
  const fresh = remembered && Date.now() - remembered.readAt < ROUTE_MEMORY_MS;
  const rememberedRoute = fresh ? routeToTask(remembered.taskArn, remembered.containerId, routing) : undefined;
  if (rememberedRoute) return rememberedRoute;
  routedTaskByHostname.delete(hostname);
  const knownId = remembered?.containerId ?? starting?.containerId;
  const containerId = knownId ?? (await routing.containerIdOfHostname(hostname));
  let container = containerId ? await routing.container(containerId) : undefined;
  // The remembered container was deleted; the hostname may belong to a new one.
  if (!container && knownId) {
    const current = await routing.containerIdOfHostname(hostname);
    container = current ? await routing.container(current) : undefined;
  }
  if (!container) return { kind: 'unknown' };
  // Running on a task that is no longer routable: the read began before a change that stopped the task (a restart's
  // swap, on a machine slow enough that the read outlasted the drain). The table knows what came after.
  if (container.state === 'running' && container.taskArn && routing.addressOf(container.taskArn) === undefined) {
    container = (await routing.container(container.id)) ?? container;
  }
  const route =
    container.state === 'running' && container.taskArn
      ? routeToTask(container.taskArn, container.id, routing)
      : startedTaskOf(container, routing);
  if (!route) {
    rememberStarting(hostname, container, routing);
    return { kind: 'unavailable', container };
  }
  return rememberRoute(hostname, route);
}

function rememberRoute(hostname: string, route: Route & { kind: 'running' }): Route {
  if (routedTaskByHostname.size < MAX_REMEMBERED_HOSTNAMES) {
    routedTaskByHostname.set(hostname, { containerId: route.containerId, taskArn: route.taskArn, readAt: Date.now() });
  }
  return route;
}

/** How long a client should wait before asking a container that is not running again. */
const RETRY_AFTER_SECONDS = 5;

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
  const arrivedAt = Date.now();
  /** This request, as a wake tells its first request from those that joined it. */
  const self = {};
  let route = await routeFor(hostname, routing);
  if (route.kind === 'unknown') {
    sendPage(response, 404, `No container is named ${hostname}`, 'Check the hostname, or create a container with it.');
    return;
  }
  routing.requestSeen?.(route.kind === 'running' ? route.containerId : route.container.id);
  let wake: Wake | undefined;
  if (route.kind === 'unavailable' && routing.waking && holdsFor(route.container, routing.waking)) {
    const held = await holdForWake(route.container, routing, routing.waking, self, arrivedAt);
    if (held.kind === 'answered') {
      held.answer(request, response, hostname);
      return;
    }
    wake = held.wake;
    route = routeToWoken(held, route.container.id, routing) ?? (await routeFor(hostname, routing));
  }
  if (route.kind === 'unavailable' && routing.waking && startsOnItsOwn(route.container)) {
    const held = await holdWhileStarting(route.container, routing, arrivedAt + routing.waking.budgetMs);
    if (held === 'budget') {
      sendStarting(request, response, hostname);
      return;
    }
    route = held;
  }
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
  // The wake's first request measures it: from its arrival to the first byte of the app's answer.
  const onFirstByte = wake?.firstRequest === self ? () => wake!.measured(Date.now() - arrivedAt) : undefined;
  const sourceIp = (request.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
  const headers = forwardable(request.headers);
  const priorFor = request.headers['x-forwarded-for'];
  headers['x-forwarded-for'] = priorFor ? `${priorFor}, ${sourceIp}` : sourceIp;
  headers['x-forwarded-proto'] = 'http';
  headers['x-forwarded-host'] = request.headers.host;

  const forwarded = await forward(request, response, hostname, headers, route, onFirstByte);
  if (forwarded === 'done') return;
  // The task stopped under the request (a restart retired it, or it exited), or a pooled
  // connection it had closed was reused: nothing reached the app, so the request goes once
  // more to the task the table names now.
  routedTaskByHostname.delete(hostname);
  let retry = await routeFor(hostname, routing);
  // Put to sleep just as the request arrived: it wakes the container, as if it had come a moment later.
  if (retry.kind === 'unavailable' && routing.waking && holdsFor(retry.container, routing.waking)) {
    const held = await holdForWake(retry.container, routing, routing.waking, self, arrivedAt);
    if (held.kind === 'answered') {
      held.answer(request, response, hostname);
      return;
    }
    retry = routeToWoken(held, retry.container.id, routing) ?? (await routeFor(hostname, routing));
  }
  if (retry.kind === 'running' && (await forward(request, response, hostname, headers, retry, onFirstByte)) === 'done') return;
  log.warn('Proxying to a local container failed', { hostname, code: forwarded.code });
  sendPage(response, 502, `${hostname} did not answer`, 'Its process is not listening on $PORT.');
}

/**
 * A swap under way: a container with a volume whose old task was stopped before its new one
 * starts (lib/containers/start-wait.ts, swapTask). Its requests are held as a wake's are, and the
 * wake's start of a starting container only waits for the swap's task.
 */
const swapping = (container: StoredContainer): boolean => container.state === 'provisioning' && container.swapStartedAt !== undefined;

/** Whether a request for a container with no route is held: a wake in flight, a sleeping container, or a swap. */
const holdsFor = (container: StoredContainer, waking: Waking): boolean =>
  wakes.has(container.id) || waking.sleeps(container) || swapping(container);

/** A container whose task is starting on its own (a create, a start, a restart after an exit): neither a wake nor a swap. */
const startsOnItsOwn = (container: StoredContainer): boolean =>
  container.state === 'provisioning' && !swapping(container) && !wakes.has(container.id);

/**
 * The watch of a starting container that its held requests share: one look a few ms apart,
 * however many requests wait, until the latest of their budgets (`giveUpAt`).
 */
interface StartingWatch {
  giveUpAt: number;
  done: Promise<StartingOutcome>;
}

/** The task the runtime now serves, the container as it is now that it stopped starting, or no longer any container. */
type StartingOutcome = { kind: 'served'; taskArn: string } | (Route & { kind: 'unavailable' | 'unknown' }) | 'budget';

const startingWatches = new Map<string, StartingWatch>();

/** How often a held request's container is looked for in the runtime's routes (memory) while its task starts. */
const STARTING_LOOK_MS = 5;

/**
 * Holds a request for a container whose task is starting until the runtime serves that task, as
 * the AWS wake endpoint holds one for a `provisioning` container (docs/routing.md, "Sleep and
 * wake on AWS"), up to the wake's budget: the client sends one request instead of asking again
 * and again, and gets its answer the moment the task answers. Answers the route then; the
 * container as it is now when it stopped starting (failed, stopped, or woken or swapped: those
 * hold their own way); or `budget`.
 */
async function holdWhileStarting(container: StoredContainer, routing: AppRouting, giveUpAt: number): Promise<Route | 'budget'> {
  let watch = startingWatches.get(container.id);
  if (watch) watch.giveUpAt = Math.max(watch.giveUpAt, giveUpAt);
  else {
    const started: StartingWatch = { giveUpAt, done: Promise.resolve<StartingOutcome>('budget') };
    started.done = watchStarting(container, routing, started).finally(() => startingWatches.delete(container.id));
    startingWatches.set(container.id, started);
    watch = started;
  }
  // Each request by its own budget: a later one's keeps the watch going, not this one waiting.
  let timer: NodeJS.Timeout | undefined;
  const ownBudget = new Promise<'budget'>((resolve) => {
    timer = setTimeout(() => resolve('budget'), Math.max(0, giveUpAt - Date.now()));
  });
  const outcome = await Promise.race([watch.done, ownBudget]);
  clearTimeout(timer);
  // Counted in flight from here, each request on its own (a stop since leaves it unavailable, as any read would).
  if (outcome !== 'budget' && outcome.kind === 'served')
    return routeToTask(outcome.taskArn, container.id, routing) ?? { kind: 'unavailable', container };
  return outcome;
}

/**
 * Looks every STARTING_LOOK_MS at what the runtime serves (no table read: the runtime counts a
 * task running, and gives its address, once it answers and the host rules were checked), and reads
 * the record again when a status of the container was applied in this process, or every 250 ms.
 */
async function watchStarting(container: StoredContainer, routing: AppRouting, watch: StartingWatch): Promise<StartingOutcome> {
  let current = container;
  let changed = false;
  let readAt = Date.now();
  const stopListening = routing.onContainerChanged?.((id) => {
    if (id === container.id) changed = true;
  });
  try {
    for (;;) {
      const served = current.taskArn !== undefined && routing.addressOf(current.taskArn) !== undefined;
      if (served && (current.state === 'running' || startsOnItsOwn(current))) return { kind: 'served', taskArn: current.taskArn! };
      if (!startsOnItsOwn(current)) return { kind: 'unavailable', container: current };
      if (Date.now() >= watch.giveUpAt) return 'budget';
      await new Promise((resolve) => setTimeout(resolve, STARTING_LOOK_MS));
      if (changed || Date.now() - readAt >= WAKE_WATCH_NOTIFIED_MS) {
        changed = false;
        readAt = Date.now();
        const read = await routing.container(container.id).catch(() => current);
        if (!read) return { kind: 'unknown' };
        current = read;
      }
    }
  } finally {
    stopListening?.();
  }
}

/** The route to the task a wake just saw running, if it still runs here. */
function routeToWoken(held: Held & { kind: 'forward' }, containerId: string, routing: AppRouting): Route | undefined {
  return held.taskArn ? routeToTask(held.taskArn, containerId, routing) : undefined;
}

/** Bodyless requests of idempotent methods, which a proxy may send again when the connection failed before any answer. */
const RETRYABLE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'DELETE']);
const RETRYABLE_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET']);

const mayRetry = (request: IncomingMessage): boolean =>
  RETRYABLE_METHODS.has(request.method ?? '') &&
  request.headers['transfer-encoding'] === undefined &&
  (request.headers['content-length'] === undefined || request.headers['content-length'] === '0');

/**
 * Sends the request to the route's task and streams its answer back. Answers `done`, or, when
 * the connection failed before any answer and the request may be sent again, the error's code
 * (nothing has been written to `response` then). Either way the request no longer counts as in
 * flight to the task.
 */
async function forward(
  request: IncomingMessage,
  response: ServerResponse,
  hostname: string,
  headers: IncomingHttpHeaders,
  route: Route & { kind: 'running' },
  onFirstByte?: () => void,
): Promise<'done' | { code: string }> {
  try {
    return await sendTo(request, response, hostname, headers, route.address, onFirstByte);
  } finally {
    route.sent();
  }
}

function sendTo(
  request: IncomingMessage,
  response: ServerResponse,
  hostname: string,
  headers: IncomingHttpHeaders,
  address: TaskAddress,
  onFirstByte?: () => void,
): Promise<'done' | { code: string }> {
  const retryable = mayRetry(request);
  return new Promise((resolve) => {
    const upstream = httpRequest({
      host: address.host,
      port: address.port,
      method: request.method,
      path: request.url,
      headers,
      agent: upstreamAgent,
    });
    upstream.on('response', (answer) => {
      onFirstByte?.();
      response.writeHead(answer.statusCode ?? 502, answer.statusMessage, forwardable(answer.headers));
      answer.pipe(response);
      answer.on('end', () => resolve('done'));
      answer.on('error', () => {
        response.destroy();
        resolve('done');
      });
    });
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      const code = error.code ?? 'EUNKNOWN';
      if (retryable && !response.headersSent && RETRYABLE_ERRORS.has(code)) return resolve({ code });
      log.warn('Proxying to a local container failed', { hostname, ...describeError(error) });
      if (!response.headersSent) sendPage(response, 502, `${hostname} did not answer`, 'Its process is not listening on $PORT.');
      else response.destroy();
      resolve('done');
    });
    // A client that goes away takes the upstream request with it.
    response.on('close', () => {
      if (!response.writableFinished) upstream.destroy();
      resolve('done');
    });
    if (retryable) upstream.end();
    else request.pipe(upstream);
  });
}

function sendPage(response: ServerResponse, status: number, title: string, detail: string): void {
  send(response, appPage(status, title, detail));
}

function send(response: ServerResponse, answer: AppAnswer): void {
  response.statusCode = answer.status;
  for (const [name, value] of Object.entries(answer.headers)) response.setHeader(name, value);
  response.end(answer.body);
}

/** How a wake ended for the requests it held. */
type WakeOutcome = { kind: 'running'; taskArn?: string } | { kind: 'refused'; title: string; detail: string };

/**
 * The wake in flight of a container: every request that arrives while it runs waits on the same
 * one, so however many requests arrive there is one start (and the start itself is a versioned
 * commit, safe against any other start).
 */
interface Wake {
  firstRequest: object;
  done: Promise<WakeOutcome>;
  /** Records the wake's time once (the first request's first byte, or readiness if it was answered the holding page). */
  measured(wakeMs: number): void;
}

const wakes = new Map<string, Wake>();

/** A wake that stays starting past its budget is waited on in further starts for at most this long. */
const MAX_WAKE_MS = 10 * 60_000;

function wakeOf(container: StoredContainer, waking: Waking, routing: AppRouting, firstRequest: object): Wake {
  const inFlight = wakes.get(container.id);
  if (inFlight) return inFlight;
  // A swap's time is the swap's own (last_swap_ms), never a wake's.
  let recorded = swapping(container);
  const wake: Wake = {
    firstRequest,
    measured: (wakeMs) => {
      if (recorded) return;
      recorded = true;
      waking.recordWake(container.id, wakeMs).catch((error: unknown) => {
        log.warn('Recording a wake time failed', { containerId: container.id, ...describeError(error) });
      });
    },
    done: runWake(container, waking, routing).finally(() => wakes.delete(container.id)),
  };
  wakes.set(container.id, wake);
  log.info(swapping(container) ? 'Holding requests through a swap' : 'Waking a sleeping container for a request', {
    containerId: container.id,
    hostname: container.hostname,
  });
  return wake;
}

/**
 * The start, raced with a watch of the table: the start answers on its own poll's backoff (up to
 * 2 s apart), while the task's RUNNING reaches the table as it happens (the runtime's event), so
 * the held requests go on as soon as the route leads to an answering task.
 */
async function runWake(container: StoredContainer, waking: Waking, routing: AppRouting): Promise<WakeOutcome> {
  let ended = false;
  const started = startForWake(container, waking);
  const outcome = await Promise.race([started, untilRoutable(container.id, routing, () => ended)]);
  ended = true;
  return outcome;
}

/**
 * How often a wake reads the table for its container's route while it starts, when nothing says
 * sooner that the container changed (a status applied in this process does: AppRouting.onContainerChanged).
 */
const WAKE_WATCH_MS = 25;
const WAKE_WATCH_NOTIFIED_MS = 250;

async function untilRoutable(containerId: string, routing: AppRouting, ended: () => boolean): Promise<WakeOutcome> {
  let changed: (() => void) | undefined;
  const stopListening = routing.onContainerChanged?.((id) => id === containerId && changed?.());
  try {
    for (;;) {
      const waitMs = stopListening ? WAKE_WATCH_NOTIFIED_MS : WAKE_WATCH_MS;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        changed = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      // The start decided first; this promise then never settles, and nothing holds on to it.
      if (ended()) return new Promise<never>(() => undefined);
      const current = await routing.container(containerId).catch(() => undefined);
      if (current?.state === 'running' && current.taskArn && routing.addressOf(current.taskArn) !== undefined) {
        return { kind: 'running', taskArn: current.taskArn };
      }
    }
  } finally {
    stopListening?.();
  }
}

async function startForWake(container: StoredContainer, waking: Waking): Promise<WakeOutcome> {
  const { hostname } = container;
  const giveUpAt = Date.now() + MAX_WAKE_MS;
  // Only the first start goes by the record as the request found it; a start that waits on reads it afresh.
  let read: StoredContainer | undefined = container;
  for (;;) {
    try {
      await waking.wake(container.id, read);
      read = undefined;
      return { kind: 'running' };
    } catch (error) {
      // Still starting past the start's own budget: a start of a starting container waits on.
      if (error instanceof TimeoutError && Date.now() < giveUpAt) continue;
      if (!(error instanceof QuotaExceededError || error instanceof ForbiddenError || error instanceof ConflictError)) {
        log.warn('Waking a container failed', { containerId: container.id, ...describeError(error) });
      }
      return { kind: 'refused', ...wakeRefusalOf(error, hostname) };
    }
  }
}

type Held =
  /** The woken task, when the wake knows it: the held requests go to it without reading the table again. */
  | { kind: 'forward'; wake: Wake; taskArn?: string }
  | { kind: 'answered'; answer: (request: IncomingMessage, response: ServerResponse, hostname: string) => void };

/**
 * Holds a request while its container wakes, up to the budget: answers `forward` once it runs,
 * or how to answer the request instead (the app is still starting; it could not wake).
 */
async function holdForWake(
  container: StoredContainer,
  routing: AppRouting,
  waking: Waking,
  request: object,
  arrivedAt: number,
): Promise<Held> {
  const wake = wakeOf(container, waking, routing, request);
  let timer: NodeJS.Timeout | undefined;
  const budget = new Promise<'budget'>((resolve) => {
    timer = setTimeout(() => resolve('budget'), Math.max(0, arrivedAt + waking.budgetMs - Date.now()));
  });
  const outcome = await Promise.race([wake.done, budget]);
  clearTimeout(timer);
  if (outcome === 'budget') {
    // The first request is answered without the app: the wake is measured when the app is ready.
    if (wake.firstRequest === request) {
      void wake.done.then((ended) => {
        if (ended.kind === 'running') wake.measured(Date.now() - arrivedAt);
      });
    }
    return { kind: 'answered', answer: sendStarting };
  }
  if (outcome.kind === 'refused') {
    return {
      kind: 'answered',
      answer: (_request, response) => send(response, refusedAnswer(outcome, RETRY_AFTER_SECONDS)),
    };
  }
  return { kind: 'forward', wake, ...(outcome.taskArn ? { taskArn: outcome.taskArn } : {}) };
}

/** Past the wake budget: a browser gets a page that reloads itself until the app answers, other clients 503 with Retry-After. */
function sendStarting(request: IncomingMessage, response: ServerResponse, hostname: string): void {
  send(response, startingAnswer(request.headers.accept, hostname));
}
