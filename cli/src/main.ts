// Over 300 lines because every command of the CLI is declared here with its flags, help and output, so `--help`
// and the code read in the same order; what the commands share (transport, session, output, fields, volumes) is
// in the other cli/src modules.
import { createInterface } from 'node:readline/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Command, CommanderError, Command as Program, Option } from 'commander';
import { resolve } from 'node:path';
import type {
  ContainerRecord,
  DeployRecord,
  DeviceAuthorizationRecord,
  ReleaseRecord,
  LogLine,
  MetricsRecord,
  TokenResponse,
  UserRecord,
} from '../../lib/http/api-types.js';
import { openBrowser } from './browser.js';
import { packBuildContext } from './build-context.js';
import { CREATE_FIELDS, UPDATE_FIELDS } from './contract.js';
import { CliError, EXIT, EXIT_CODES_TEXT, errorEnvelope } from './errors.js';
import { addFieldOptions, bodyFromOptions, fieldRows, namedValue, problemsText } from './fields.js';
import { endQuietlyOnClosedPipe, out, printJson, say } from './output.js';
import { addVolumeCommands } from './volumes.js';
import {
  ApiError,
  apiCall,
  apiList,
  apiUrlOf,
  CLI_CLIENT_ID,
  CLI_SCOPES,
  forgetSignIn,
  oauthForm,
  readCredentials,
  saveSignIn,
} from './session.js';
import { CLI_VERSION, sendToPresigned } from './transport.js';

/**
 * `container-hosting`, the service's command-line client (docs/clients.md, "Command-line client").
 * Built by `npm ci` (the `prepare` script, scripts/build-cli.ts) into one file with its
 * dependencies, so it starts in well under 300 ms. Exit codes: EXIT (cli/src/errors.ts).
 */

const DEVICE_CODE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SETTLED_STATES: ReadonlyArray<ContainerRecord['state']> = ['running', 'stopped', 'failed'];
// `logs -f` asks every 2 s: docs/api.md "What reading costs" (CloudWatch Logs quotas on AWS).
const FOLLOW_POLL_MS = 2000;
const STATE_POLL_MS = 1000;
/** A deploy's state is read this often for its first DEPLOY_QUICK_POLLS_FOR_MS after the upload, then every STATE_POLL_MS. */
const DEPLOY_QUICK_POLL_MS = 100;
const DEPLOY_QUICK_POLLS_FOR_MS = 5000;
/** Within those, how often while the deploy's new release starts (`deploying`). */
const DEPLOYING_POLL_MS = 50;
/** How long a read of a deploy asks the service to wait for its change: the most it waits (docs/deploys.md, "Waiting for a change"). */
const DEPLOY_WAIT_S = 20;
/** The columns of `ls`, checked against the record's type; the rest is for `get`. */
const LIST_COLUMNS = ['hostname', 'state', 'image', 'cpu_cores', 'memory_mb', 'url', 'id'] as const satisfies ReadonlyArray<
  keyof ContainerRecord
>;
/** The fields the command line takes as arguments rather than flags: `create HOSTNAME -- COMMAND…`. */
const ARGUMENT_FIELDS = ['hostname', 'command'];
/**
 * The fields a PATCH applies at once, as the document says of each (`x-applies-at`, from
 * lib/containers/workload.ts); every other one applies at the next start or restart.
 */
const APPLIES_AT_ONCE = new Set(UPDATE_FIELDS.filter((field) => field.appliesAt === 'once').map((field) => field.name));
/**
 * A `state_reason` that says the image could not be pulled (docs/containers.md, "Restart policy"):
 * the policy's retries pull the same image again, so waiting for them only delays the answer.
 */
const PULL_FAILED = /^image pull failed/;

interface Globals {
  api?: string;
  json?: boolean;
  insecure?: boolean;
}

/** Global options, wherever on the line they were given. */
const globals = (command: Command) => command.optsWithGlobals<Globals>();
const apiOf = (command: Command) => apiUrlOf(globals(command).api, globals(command).insecure);

interface Spinner {
  update(text: string): void;
  success(text: string): void;
  error(text: string): void;
}

/** A spinner on stderr when it is a terminal; nothing otherwise, so pipes and tests read clean lines. */
async function spinner(text: string): Promise<Spinner> {
  if (!process.stderr.isTTY) return { update() {}, success() {}, error() {} };
  const { createSpinner } = await import('nanospinner');
  const spin = createSpinner(text, { stream: process.stderr }).start();
  return {
    update: (next) => spin.update({ text: next }),
    success: (done) => spin.success({ text: done }),
    error: (done) => spin.error({ text: done }),
  };
}

function table(rows: ContainerRecord[]): void {
  const titles = LIST_COLUMNS.map((column) => column.toUpperCase());
  const cells = rows.map((row) => LIST_COLUMNS.map((column) => String(row[column] ?? '-')));
  const widths = titles.map((title, index) => Math.max(title.length, ...cells.map((row) => row[index]!.length)));
  const line = (values: string[]) =>
    values
      .map((value, index) => value.padEnd(widths[index]!))
      .join('  ')
      .trimEnd();
  out(line(titles));
  for (const row of cells) out(line(row));
}

/** One container, a line per fact: who and where it is, then each workload field of the PATCH body. */
function details(container: ContainerRecord): void {
  const record = container as unknown as Record<string, unknown>;
  const rows: Array<[string, string]> = [
    ['id', container.id],
    ['hostname', container.hostname],
    ['state', container.state + (container.state_reason ? ` (${container.state_reason})` : '')],
    ['last wake', container.last_wake_ms === null || container.last_wake_ms === undefined ? '-' : `${container.last_wake_ms} ms`],
    ['url', container.url ?? '-'],
    ...fieldRows(UPDATE_FIELDS, record),
    ['restarts', String(container.restart_count)],
    ['created', container.created_at],
    ['updated', container.updated_at],
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  for (const [name, value] of rows) out(`${name.padEnd(width)}  ${value}`);
}

/** A container named by its id or its hostname. */
async function findContainer(api: string, name: string): Promise<ContainerRecord> {
  if (UUID.test(name)) return (await apiCall<ContainerRecord>(api, 'GET', `/api/v1/containers/${name}`)).data;
  const found = (await apiList<ContainerRecord>(api, '/api/v1/containers', { limit: 1000 })).find(
    (container) => container.hostname === name,
  );
  if (!found) throw new CliError(`No container named ${name}`, { code: 'NOT_FOUND' });
  return found;
}

/**
 * Why a container the CLI waits for will not come up: it is `failed`, or it waits for its restart
 * policy after a failed image pull. Undefined while it may still come up.
 */
function failureOf(container: ContainerRecord): string | undefined {
  if (container.state === 'failed') return container.state_reason ?? 'failed';
  if (container.state === 'provisioning' && container.state_reason && PULL_FAILED.test(container.state_reason)) {
    return container.state_reason;
  }
  return undefined;
}

const getContainer = async (api: string, id: string, signal?: AbortSignal) =>
  (await apiCall<ContainerRecord>(api, 'GET', `/api/v1/containers/${id}`, { signal })).data;

/** Polls until the container's state settles (running, stopped or failed) or its image pull fails, with a spinner. */
async function untilSettled(api: string, container: ContainerRecord, verb: string): Promise<ContainerRecord> {
  const spin = await spinner(`${verb} ${container.hostname}: ${container.state}`);
  let current = container;
  while (!SETTLED_STATES.includes(current.state) && failureOf(current) === undefined) {
    await sleep(STATE_POLL_MS);
    current = await getContainer(api, container.id);
    spin.update(`${verb} ${container.hostname}: ${current.state}`);
  }
  const failure = failureOf(current);
  if (failure !== undefined) spin.error(`${container.hostname} failed: ${failure}`);
  else spin.success(`${container.hostname} is ${current.state}`);
  return current;
}

/** The record waited for, shown; then, when it failed, the failure with its own exit code (EXIT.containerFailed). */
function showOutcome(command: Command, container: ContainerRecord): void {
  show(command, container, details);
  const failure = failureOf(container);
  if (failure !== undefined) {
    throw new CliError(`${container.hostname} failed to start: ${failure}`, { code: 'CONTAINER_FAILED', exitCode: EXIT.containerFailed });
  }
}

function show<Data>(command: Command, data: Data, human: (data: Data) => void): void {
  if (globals(command).json) printJson(data);
  else human(data);
}

// login, logout, whoami

async function login(options: { browser: boolean }, command: Command): Promise<void> {
  const api = apiOf(command);
  const started = await oauthForm<DeviceAuthorizationRecord>(api, '/api/v1/oauth/device_authorization', {
    client_id: CLI_CLIENT_ID,
    scope: CLI_SCOPES,
  });
  if (started.status !== 200) {
    throw new CliError(started.body.error_description ?? `device authorization failed (HTTP ${started.status})`, {
      code: started.body.error,
    });
  }
  const device = started.body;
  out(`To sign in, open ${device.verification_uri_complete}`);
  out(`and check that it shows the code ${device.user_code}`);
  // Only the API's own device page is opened; anything else is left for the person to judge.
  if (options.browser !== false && openBrowser(device.verification_uri_complete, { origin: new URL(api).origin })) {
    say('(opened in your browser)');
  }
  let interval = device.interval ?? 5;
  const deadline = Date.now() + device.expires_in * 1000;
  const spin = await spinner('Waiting for approval in the browser…');
  for (;;) {
    await sleep(interval * 1000);
    if (Date.now() > deadline) {
      spin.error('The code expired');
      throw new CliError('The code expired before it was approved; run login again', { code: 'expired_token' });
    }
    const polled = await oauthForm<TokenResponse>(api, '/api/v1/oauth/token', {
      grant_type: DEVICE_CODE_GRANT_TYPE,
      device_code: device.device_code,
      client_id: CLI_CLIENT_ID,
    });
    if (polled.status === 200) {
      saveSignIn(api, polled.body);
      break;
    }
    const error = polled.body.error;
    if (error === 'authorization_pending') continue;
    // RFC 8628 section 3.5: every slow_down adds 5 seconds to the interval, for good.
    if (error === 'slow_down') {
      interval += 5;
      continue;
    }
    spin.error(error === 'access_denied' ? 'Denied in the browser' : 'Sign-in failed');
    throw new CliError(polled.body.error_description ?? `HTTP ${polled.status}`, { code: error });
  }
  const { data: me } = await apiCall<UserRecord>(api, 'GET', '/api/v1/users/me');
  spin.success(`Signed in to ${api}`);
  out(`Signed in to ${api} as ${me.email}`);
}

async function logout(_options: unknown, command: Command): Promise<void> {
  const api = apiOf(command);
  const entry = readCredentials().apis[api];
  if (!entry) {
    out(`Not signed in to ${api}`);
    return;
  }
  // RFC 7009: revoking the refresh token ends its grant, so the access token stops too.
  const revoked = await oauthForm<object>(api, '/api/v1/oauth/token/revoke', {
    token: entry.refresh_token,
    token_type_hint: 'refresh_token',
    client_id: entry.client_id ?? CLI_CLIENT_ID,
  });
  forgetSignIn(api);
  if (revoked.status !== 200) throw new CliError(revoked.body.error_description ?? `HTTP ${revoked.status}`, { code: revoked.body.error });
  out(`Signed out of ${api}`);
}

async function whoami(_options: unknown, command: Command): Promise<void> {
  const api = apiOf(command);
  const { data } = await apiCall<UserRecord>(api, 'GET', '/api/v1/users/me');
  show(command, data, (me) => out(`${me.email} (${me.role}) on ${api}`));
}

// containers

async function list(_options: unknown, command: Command): Promise<void> {
  const api = apiOf(command);
  const containers = await apiList<ContainerRecord>(api, '/api/v1/containers', { limit: 1000 });
  show(command, containers, (rows) =>
    rows.length ? table(rows) : say('No containers yet; create one with: container-hosting create HOSTNAME'),
  );
}

async function create(hostname: string, commandWords: string[], options: Record<string, unknown>, command: Command): Promise<void> {
  const api = apiOf(command);
  const body = {
    hostname,
    ...bodyFromOptions(CREATE_FIELDS, options),
    ...(commandWords.length ? { command: commandWords } : {}),
  };
  const { data } = await apiCall<ContainerRecord>(api, 'POST', '/api/v1/containers', { body });
  if (options.wait === false) return show(command, data, details);
  showOutcome(command, await untilSettled(api, data, 'Creating'));
}

async function update(name: string, commandWords: string[], options: Record<string, unknown>, command: Command): Promise<void> {
  const api = apiOf(command);
  const container = await findContainer(api, name);
  const changes = {
    ...bodyFromOptions(UPDATE_FIELDS, options, container as unknown as Record<string, unknown>),
    ...(commandWords.length ? { command: commandWords } : {}),
  };
  if (Object.keys(changes).length === 0)
    throw new CliError('Nothing to change: give at least one option (see update --help)', { exitCode: EXIT.usage });
  const { data } = await apiCall<ContainerRecord>(api, 'PATCH', `/api/v1/containers/${container.id}`, { body: changes });
  show(command, data, details);
  hintWhenChangeApplies(command, data, Object.keys(changes));
}

/**
 * Tells the person when a change reaches the running task: most fields at the next start or
 * restart, some (`idle_timeout_s`, `restart_policy`) at once (APPLIES_AT_ONCE). On stderr, so data on stdout stays data.
 */
function hintWhenChangeApplies(command: Command, container: ContainerRecord, changed: readonly string[]): void {
  if (globals(command).json) return;
  const atOnce = changed.filter((field) => APPLIES_AT_ONCE.has(field));
  const later = changed.filter((field) => !APPLIES_AT_ONCE.has(field));
  if (atOnce.length > 0) say(`The change of ${atOnce.join(', ')} applies at once.`);
  if (later.length === 0) return;
  const change = `The change of ${later.join(', ')}`;
  if (container.state === 'running' || container.state === 'provisioning') {
    say(`${change} applies at the next start; to apply it now: container-hosting restart ${container.hostname}`);
  } else say(`${change} applies when ${container.hostname} next starts.`);
}

async function get(name: string, _options: unknown, command: Command): Promise<void> {
  show(command, await findContainer(apiOf(command), name), details);
}

const lifecycle = (action: string, verb: string) => async (name: string, options: { wait: boolean }, command: Command) => {
  const api = apiOf(command);
  const container = await findContainer(api, name);
  const path = `/api/v1/containers/${container.id}/${action}`;
  if (options.wait === false) return show(command, (await apiCall<ContainerRecord>(api, 'POST', path)).data, details);
  if (action === 'stop')
    return show(command, await untilSettled(api, (await apiCall<ContainerRecord>(api, 'POST', path)).data, verb), details);
  showOutcome(command, await untilStarted(api, container, path, verb));
};

/**
 * A start or restart: the API answers once the container runs, fails or its start budget is
 * spent, and meanwhile the record is watched, so a failed image pull ends the wait at once
 * instead of after the budget. When the API answers with an error, the record says whether
 * the container failed (EXIT.containerFailed) or the request did; a start past the API's budget
 * (504 TIMEOUT) is still under way, and is watched until it settles.
 */
async function untilStarted(api: string, container: ContainerRecord, path: string, verb: string): Promise<ContainerRecord> {
  const answered = new AbortController();
  const request = apiCall<ContainerRecord>(api, 'POST', path, { signal: answered.signal }).then(
    ({ data }) => ({ data }),
    (error: unknown) => ({ error }),
  );
  const watch = (async () => {
    for (;;) {
      await sleep(STATE_POLL_MS, undefined, { signal: answered.signal });
      const current = await getContainer(api, container.id, answered.signal);
      if (current.state === 'provisioning' && failureOf(current) !== undefined) return { failed: current };
    }
    // A read that fails leaves the answer to the request; the watch ends with it.
  })().catch(() => new Promise<never>(() => {}));
  const first = await Promise.race([request, watch]);
  answered.abort();
  if ('failed' in first) return first.failed;
  if ('data' in first) return untilSettled(api, first.data, verb);
  const current = await getContainer(api, container.id).catch(() => undefined);
  if (current && failureOf(current) !== undefined) return current;
  // 504 TIMEOUT: the start outlasted the API's budget and goes on (the message says to ask again); watched here instead.
  if (current && first.error instanceof CliError && first.error.code === 'TIMEOUT') return untilSettled(api, current, verb);
  throw first.error;
}

const canAsk = () => Boolean(process.stdin.isTTY && process.stderr.isTTY);

/** `rm` asks on a terminal, and takes --yes instead. */
async function confirmRemoval(name: string): Promise<void> {
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await prompt.question(`Delete ${name}, its logs and its URL for good? [y/N] `);
    if (!/^y(es)?$/i.test(answer.trim())) throw new CliError(`Kept ${name}`, { code: 'NOT_CONFIRMED', exitCode: EXIT.usage });
  } finally {
    prompt.close();
  }
}

async function remove(name: string, options: { yes?: boolean }, command: Command): Promise<void> {
  const api = apiOf(command);
  // Where nobody can answer (a script, a pipe) it refuses before any request rather than delete on a guess.
  if (!options.yes && !canAsk()) {
    throw new CliError(`rm deletes ${name} for good; with no terminal to ask, pass --yes to confirm`, { exitCode: EXIT.usage });
  }
  const container = await findContainer(api, name);
  if (!options.yes) await confirmRemoval(container.hostname);
  const { data } = await apiCall<unknown>(api, 'DELETE', `/api/v1/containers/${container.id}`);
  show(command, data, () => out(`Deleted ${container.hostname}`));
}

const logLine = (line: LogLine) => `${line.timestamp} ${line.stream === 'stderr' ? 'err' : 'out'} ${line.message}`;

/**
 * Where following resumes: the newest timestamp read, and how many lines of that millisecond were
 * read already (all of them, after the backlog: a burst written in one millisecond may have begun
 * before the backlog's first line). Lines are asked for from that timestamp on, which answers
 * those lines again first, in the same order.
 */
interface FollowPosition {
  since: string;
  readAtSince: number;
}

/** The position after reading every line from a position's timestamp on: the answer holds all lines of its newest millisecond. */
function positionAfter(lines: readonly LogLine[], previous: FollowPosition): FollowPosition {
  const newest = lines.at(-1)?.timestamp;
  if (newest === undefined) return previous;
  return { since: newest, readAtSince: lines.filter((line) => line.timestamp === newest).length };
}

/** The lines after a position: those of its millisecond already read are skipped. */
function linesAfter(lines: readonly LogLine[], position: FollowPosition): LogLine[] {
  let skip = position.readAtSince;
  return lines.filter((line) => {
    if (line.timestamp !== position.since || skip <= 0) return true;
    skip -= 1;
    return false;
  });
}

async function logs(name: string, options: { follow?: boolean; since?: string; limit?: number }, command: Command): Promise<void> {
  const api = apiOf(command);
  const json = globals(command).json;
  const container = await findContainer(api, name);
  const path = `/api/v1/containers/${container.id}/logs`;
  const print = (line: LogLine) => out(json ? JSON.stringify(line) : logLine(line));
  if (!options.follow) {
    const { data } = await apiCall<LogLine[]>(api, 'GET', path, { query: { limit: options.limit, since: options.since } });
    if (json) printJson(data);
    else data.forEach(print);
    return;
  }
  // The backlog is the newest --limit lines (from --since when given), so following goes on from its last line with no gap.
  const sinceGiven = options.since ? await apiList<LogLine>(api, path, { since: options.since, limit: 1000 }) : undefined;
  const backlog = sinceGiven
    ? sinceGiven.slice(options.limit === undefined ? 0 : -options.limit)
    : (await apiCall<LogLine[]>(api, 'GET', path, { query: { limit: options.limit } })).data;
  backlog.forEach(print);
  const newest = backlog.at(-1)?.timestamp;
  let position: FollowPosition = newest
    ? { since: newest, readAtSince: Number.POSITIVE_INFINITY }
    : { since: options.since ?? new Date().toISOString(), readAtSince: 0 };
  // Ctrl-C (or a TERM from a supervisor) ends following with exit 0.
  const stop = new Promise<'stop'>((resolve) => {
    process.once('SIGINT', () => resolve('stop'));
    process.once('SIGTERM', () => resolve('stop'));
  });
  for (;;) {
    const tick = await Promise.race([sleep(FOLLOW_POLL_MS).then(() => 'tick' as const), stop]);
    if (tick === 'stop') return;
    const answered = await apiList<LogLine>(api, path, { since: position.since, limit: 1000 });
    linesAfter(answered, position).forEach(print);
    position = positionAfter(answered, position);
  }
}

async function metrics(name: string, _options: unknown, command: Command): Promise<void> {
  const api = apiOf(command);
  const container = await findContainer(api, name);
  const { data } = await apiCall<MetricsRecord>(api, 'GET', `/api/v1/containers/${container.id}/metrics`);
  show(command, data, (figures) => {
    out(`cpu     ${figures.cpu_percent}%`);
    out(`memory  ${figures.memory_used_mb} / ${figures.memory_total_mb} MB`);
    out(`disk    ${figures.disk_used_gb} / ${figures.disk_total_gb} GB`);
  });
}

async function changeEnv(name: string, change: (env: Record<string, string>) => Record<string, string>, command: Command): Promise<void> {
  const api = apiOf(command);
  const container = await findContainer(api, name);
  // PATCH replaces the whole env, so the change is applied to the current set.
  const env = change({ ...container.env });
  const { data } = await apiCall<ContainerRecord>(api, 'PATCH', `/api/v1/containers/${container.id}`, { body: { env } });
  show(command, data, details);
  hintWhenChangeApplies(command, data, ['env']);
}

async function open(name: string, options: { browser: boolean }, command: Command): Promise<void> {
  const api = apiOf(command);
  const container = await findContainer(api, name);
  if (!container.url) throw new CliError(`${container.hostname} has no public URL on this deployment`, { code: 'NO_URL' });
  out(container.url);
  if (options.browser !== false) openBrowser(container.url);
}

// deploys and releases

const DEPLOY_FINAL_STATES: ReadonlyArray<DeployRecord['state']> = ['live', 'failed', 'superseded'];

/**
 * Packs DIR (its .dockerignore honoured), uploads it to the URL the deploy answered, prints the
 * build's output on stderr as it comes, and waits until the deploy is live: then the URL on
 * stdout (or, under --json, the deploy record). A deploy that fails exits EXIT.containerFailed with its reason.
 */
async function deploy(
  dir: string | undefined,
  options: { container: string; create?: boolean; dockerfile?: string },
  command: Command,
): Promise<void> {
  const api = apiOf(command);
  const json = globals(command).json;
  const dockerfile = options.dockerfile ?? 'Dockerfile';
  // Packed while the container is looked up: neither waits for the other, and the lookup is asked first.
  const lookup = findContainer(api, options.container);
  lookup.catch(() => undefined);
  const packed = packBuildContext(resolve(dir ?? '.'), dockerfile);
  packed.catch(() => undefined);
  let container: ContainerRecord;
  try {
    container = await lookup;
  } catch (error) {
    if (!(options.create && error instanceof CliError && error.code === 'NOT_FOUND')) throw error;
    // A directory that cannot be packed (missing, unreadable) creates nothing.
    await packed;
    container = (await apiCall<ContainerRecord>(api, 'POST', '/api/v1/containers', { body: { hostname: options.container } })).data;
    say(`Created ${container.hostname}`);
  }
  const context = await packed;
  const { data: created } = await apiCall<DeployRecord>(api, 'POST', `/api/v1/containers/${container.id}/deploys`, {
    body: { size_bytes: context.length, dockerfile },
  });
  if (!created.upload) throw new CliError('The service answered no upload URL', { code: 'NO_UPLOAD' });
  say(`Uploading ${context.length} bytes of context for deploy ${created.id}`);
  // Not the API's origin on AWS (a presigned S3 URL), so no credential goes with it: the URL is the permission.
  const put = await sendToPresigned(new URL(created.upload.url), { method: 'PUT', headers: created.upload.headers, body: context });
  if (!put.ok)
    throw new CliError(`The upload was refused (${put.status}): ${(await put.text()).slice(0, 500)}`, { code: 'UPLOAD_REFUSED' });
  const logsPath = `/api/v1/containers/${container.id}/deploys/${created.id}/logs`;
  let position: FollowPosition = { since: created.created_at, readAtSince: 0 };
  let logsUnreadable = false;
  // The build's output is told beside its outcome, not instead of it: a read of it that fails is said once, and the
  // deploy is followed on to its end, which decides the exit code.
  const printNewLines = async () => {
    try {
      const lines = await apiList<LogLine>(api, logsPath, { since: position.since, limit: 1000 });
      for (const line of linesAfter(lines, position)) say(logLine(line));
      position = positionAfter(lines, position);
    } catch (error) {
      if (!logsUnreadable) say(`Could not read the build's output: ${error instanceof Error ? error.message : String(error)}`);
      logsUnreadable = true;
    }
  };
  // The build's output, once a second, until the build is seen ended: its logs are complete then, and read once more.
  const logsEnd = new AbortController();
  const following = (async () => {
    while (!logsEnd.signal.aborted) {
      await sleep(STATE_POLL_MS, undefined, { signal: logsEnd.signal }).catch(() => undefined);
      if (!logsEnd.signal.aborted) await printNewLines();
    }
  })();
  let lastLines: Promise<void> | undefined;
  const readLastLines = () => {
    logsEnd.abort();
    lastLines ??= following.then(printNewLines);
  };
  const deployPath = `/api/v1/containers/${container.id}/deploys/${created.id}`;
  // Each read asks to be answered once the deploy has left the state last seen (`changed_from`), waiting up to
  // DEPLOY_WAIT_S: the local stack answers the moment it changes, AWS at once (docs/deploys.md, "Waiting for a
  // change"), and a service older than the parameter ignores it and answers at once. A read that answers the state it
  // was asked about is asked again after an interval: often at first (a small context on a local engine goes live
  // in under a second), then once a second (a build on AWS takes minutes). The upload answered once the deploy left
  // waiting_for_upload where the stack receives it; on AWS an S3 event moves it a moment later.
  let seen: DeployRecord['state'] = 'building';
  const uploadedAt = Date.now();
  let current = created;
  try {
    for (;;) {
      const readAt = Date.now();
      current = (await apiCall<DeployRecord>(api, 'GET', deployPath, { query: { changed_from: seen, wait_s: DEPLOY_WAIT_S } })).data;
      if (DEPLOY_FINAL_STATES.includes(current.state)) break;
      if (current.state === 'deploying') readLastLines();
      if (current.state !== seen) {
        seen = current.state;
        continue;
      }
      const quick = Date.now() - uploadedAt < DEPLOY_QUICK_POLLS_FOR_MS;
      const interval = quick ? (current.state === 'deploying' ? DEPLOYING_POLL_MS : DEPLOY_QUICK_POLL_MS) : STATE_POLL_MS;
      await sleep(Math.max(0, readAt + interval - Date.now()));
    }
  } finally {
    // Whatever ended the following (a state read that failed too), the output's reads end with it.
    logsEnd.abort();
  }
  // The build's last lines, written before the state that ended the wait.
  readLastLines();
  await lastLines;
  if (json) printJson(current);
  else if (current.state === 'live') out(container.url ?? `${container.hostname} runs release ${current.release}`);
  if (current.state !== 'live') {
    throw new CliError(`The deploy ended ${current.state}: ${current.state_reason ?? 'no reason given'}`, {
      code: 'DEPLOY_FAILED',
      exitCode: EXIT.containerFailed,
    });
  }
}

async function releases(name: string, _options: unknown, command: Command): Promise<void> {
  const api = apiOf(command);
  const container = await findContainer(api, name);
  const found = await apiList<ReleaseRecord>(api, `/api/v1/containers/${container.id}/releases`, { limit: 100 });
  show(command, found, (rows) => {
    for (const release of rows) {
      const current = release.version === container.release ? '*' : ' ';
      const gone = release.image_available === false ? ' (image pruned)' : '';
      out(`${current} v${release.version}  ${release.cause.padEnd(8)}  ${release.created_at}  ${release.workload.image}${gone}`);
    }
  });
}

async function rollback(name: string, version: string, _options: unknown, command: Command): Promise<void> {
  const api = apiOf(command);
  const container = await findContainer(api, name);
  const number = version.replace(/^v/, '');
  if (!/^\d+$/.test(number)) throw new CliError(`VERSION must be a release number, got "${version}"`, { exitCode: EXIT.usage });
  const { data } = await apiCall<ContainerRecord>(api, 'POST', `/api/v1/containers/${container.id}/releases/${number}/rollback`);
  show(command, data, details);
}

// the command line

const program = new Program();
program
  .name('container-hosting')
  .description('Run containers on the container hosting service from your terminal.')
  .version(CLI_VERSION)
  .addOption(new Option('--api <url>', 'the service, e.g. http://127.0.0.1:3000').env('CONTAINER_HOSTING_API'))
  .option('--json', "print the API's data as JSON, and errors as the API's envelope on stderr")
  .option('--insecure', 'allow plain http to an API on another machine (credentials cross the network in the clear)')
  .showHelpAfterError()
  // Under --json, a usage error is reported once, as an envelope (reportFailure), without commander's words and help.
  .configureOutput({
    writeErr: (text) => {
      if (!jsonAsked()) process.stderr.write(text);
    },
  })
  .exitOverride();

program.addHelpText(
  'after',
  `
Sign in with "container-hosting login"; credentials are kept per API in $XDG_CONFIG_HOME/container-hosting/
(mode 0600). CONTAINER_HOSTING_TOKEN (a personal access token) is used instead when set. Credentials go only
to the API's own origin: over https, or plain http to this machine (--insecure for another), never after a
redirect elsewhere.
Data goes to stdout; progress, hints and errors to stderr (under --json, an error is the API's envelope:
{"error":{"code","message","details"?}}). A closed pipe (| head -1) ends the command quietly with exit 0.
${EXIT_CODES_TEXT}`,
);

program
  .command('login')
  .description('sign in with the device authorization grant')
  .option('--no-browser', 'never open a browser')
  .action(login);
program.command('logout').description('revoke the stored sign-in and forget it').action(logout);
program.command('whoami').description('who the stored sign-in or token acts as').action(whoami);
program.command('ls').alias('list').description('list your containers').action(list);

addFieldOptions(
  program
    .command('create')
    .description('create a container; words after -- are its command')
    .argument('<hostname>', 'its name, also its URL: 1 to 63 lowercase letters, digits or hyphens')
    .argument('[command...]', 'the command to run instead of the image default (after --)'),
  CREATE_FIELDS,
  ARGUMENT_FIELDS,
)
  .option('--no-wait', 'do not wait for it to start')
  .action(create);

addFieldOptions(
  program
    .command('update')
    .description('change what a container runs from its next start (PATCH); words after -- replace its command')
    .argument('<container>', 'hostname or id')
    .argument('[command...]', 'the new command (after --)'),
  UPDATE_FIELDS,
  ARGUMENT_FIELDS,
).action(update);

program.command('get').description('show one container').argument('<container>', 'hostname or id').action(get);
for (const [name, verb] of [
  ['start', 'Starting'],
  ['stop', 'Stopping'],
  ['restart', 'Restarting'],
] as const) {
  program
    .command(name)
    .description(`${name} a container and wait until its state settles`)
    .argument('<container>', 'hostname or id')
    .option('--no-wait', 'do not wait for the state to settle')
    .action(lifecycle(name, verb));
}
program
  .command('rm')
  .alias('delete')
  .description('delete a container; asks first on a terminal')
  .argument('<container>', 'hostname or id')
  .option('-y, --yes', 'delete without asking (needed where there is no terminal to ask)')
  .action(remove);

const positiveNumber = (flag: string) => (value: string) => {
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0)
    throw new CliError(`${flag} must be a positive number, got "${value}"`, { exitCode: EXIT.usage });
  return number;
};
program
  .command('logs')
  .description("print a container's output, oldest first")
  .argument('<container>', 'hostname or id')
  .option('-f, --follow', 'keep printing new lines (Ctrl-C stops)')
  .option('--since <time>', 'from this ISO 8601 time, e.g. 2026-01-31T12:00:00Z')
  .option('--limit <n>', 'at most this many lines (1 to 1000)', positiveNumber('--limit'))
  .action(logs);
program.command('metrics').description('CPU, memory and disk use').argument('<container>', 'hostname or id').action(metrics);

const env = program.command('env').description("change a container's environment variables");
env
  .command('set')
  .description('set variables (PATCH)')
  .argument('<container>', 'hostname or id')
  .argument('<NAME=VALUE...>', 'variables to set')
  .action((name: string, pairs: string[], _options: unknown, command: Command) => {
    const entries = pairs.map(namedValue);
    return changeEnv(name, (current) => Object.assign(current, Object.fromEntries(entries)), command);
  });
env
  .command('unset')
  .description('remove variables (PATCH)')
  .argument('<container>', 'hostname or id')
  .argument('<NAME...>', 'variables to remove')
  .action((name: string, names: string[], _options: unknown, command: Command) =>
    changeEnv(
      name,
      (current) => {
        for (const variable of names) delete current[variable];
        return current;
      },
      command,
    ),
  );
program
  .command('deploy')
  .description("build DIR (default .) with its Dockerfile and make it the container's new release; waits until live and prints its URL")
  .argument('[dir]', 'the build context: packed as a gzipped tar, .dockerignore honoured')
  .requiredOption('--container <name>', 'hostname or id of the container to deploy to')
  .option('--create', 'create the container first when there is none of that name')
  .option('--dockerfile <path>', 'the Dockerfile inside DIR', 'Dockerfile')
  .action(deploy);
program
  .command('releases')
  .description("list a container's releases, newest first (* marks the one it runs)")
  .argument('<container>', 'hostname or id')
  .action(releases);
program
  .command('rollback')
  .description('roll a container back to the workload of an earlier release (a new release, zero downtime)')
  .argument('<container>', 'hostname or id')
  .argument('<version>', 'the release to go back to')
  .action(rollback);
program
  .command('open')
  .description("print a container's URL and open it in the browser when there is one")
  .argument('<container>', 'hostname or id')
  .option('--no-browser', 'only print the URL')
  .action(open);
addVolumeCommands(program);

/** Whether --json was given, before the words of a container's command (`-- …`); read before commander has parsed. */
function jsonAsked(): boolean {
  const words = process.argv.slice(2);
  const end = words.indexOf('--');
  return (end === -1 ? words : words.slice(0, end)).includes('--json');
}

/** A failure on stderr: one line for a person, or under --json the API's envelope; the exit code from EXIT. */
function reportFailure(error: unknown): void {
  if (error instanceof CommanderError) {
    // Help and version exit 0; every other parsing failure is a usage error.
    process.exitCode = error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    if (process.exitCode !== EXIT.ok && jsonAsked()) {
      say(JSON.stringify(errorEnvelope(error.message.replace(/^error: /, ''), { exitCode: EXIT.usage })));
    }
    return;
  }
  const failure = error instanceof CliError ? error : new CliError((error as Error).message);
  process.exitCode = failure.exitCode;
  const details = failure instanceof ApiError ? failure.details : [];
  if (jsonAsked()) {
    say(JSON.stringify(errorEnvelope(failure.message, { code: failure.code, exitCode: failure.exitCode, details })));
    return;
  }
  // A field problem is told by the flag that sets it, from the envelope's details, not its message.
  const message = details.length > 0 ? problemsText(details, CREATE_FIELDS, ARGUMENT_FIELDS) : failure.message;
  say(`error: ${message}${failure.code ? ` (${failure.code})` : ''}`);
}

endQuietlyOnClosedPipe();
try {
  await program.parseAsync(process.argv);
} catch (error) {
  reportFailure(error);
}
