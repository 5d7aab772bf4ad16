#!/usr/bin/env node
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { Command, CommanderError, Option } from 'commander';
import {
  apiCall,
  apiList,
  apiUrlOf,
  CLI_CLIENT_ID,
  CLI_SCOPES,
  CliError,
  forgetSignIn,
  oauthForm,
  readCredentials,
  saveSignIn,
} from './session.mjs';

/**
 * `container-hosting`, the service's command-line client (README, "Command-line client").
 * Plain ESM with two small dependencies, so it starts in well under 300 ms.
 * Exit codes: 0 success, 1 API or network error, 2 usage.
 */

const DEVICE_CODE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SETTLED_STATES = ['running', 'stopped', 'failed'];
// `logs -f` asks every 2 s: docs/containers.md "What reading costs" (CloudWatch Logs quotas on AWS).
const FOLLOW_POLL_MS = 2000;
const STATE_POLL_MS = 1000;

const program = new Command();

const out = (line = '') => process.stdout.write(`${line}\n`);
const say = (line = '') => process.stderr.write(`${line}\n`);

/** Global options, wherever on the line they were given. */
const globals = (command) => command.optsWithGlobals();

/** A spinner on stderr when it is a terminal; nothing otherwise, so pipes and tests read clean lines. */
async function spinner(text) {
  if (!process.stderr.isTTY) return { update() {}, success() {}, error() {}, stop() {} };
  const { createSpinner } = await import('nanospinner');
  const spin = createSpinner(text, { stream: process.stderr }).start();
  return {
    update: (next) => spin.update({ text: next }),
    success: (done) => spin.success({ text: done }),
    error: (done) => spin.error({ text: done }),
    stop: () => spin.stop(),
  };
}

/** Opens a URL in the desktop's browser when there is one; says nothing when there is none. */
function openBrowser(url) {
  const hasDesktop = process.platform === 'darwin' || process.platform === 'win32' || process.env.DISPLAY || process.env.WAYLAND_DISPLAY;
  if (!hasDesktop) return false;
  const [command, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '', url]]
        : ['xdg-open', [url]];
  try {
    const child = spawn(command, args, { stdio: 'ignore', detached: true });
    child.on('error', () => {});
    child.unref();
    return true;
  } catch {
    return false;
  }
}

function table(rows, columns) {
  if (rows.length === 0) return;
  const cells = rows.map((row) => columns.map(([, pick]) => String(pick(row) ?? '')));
  const widths = columns.map(([title], index) => Math.max(title.length, ...cells.map((row) => row[index].length)));
  const line = (values) =>
    values
      .map((value, index) => value.padEnd(widths[index]))
      .join('  ')
      .trimEnd();
  out(line(columns.map(([title]) => title)));
  for (const row of cells) out(line(row));
}

function details(container) {
  const rows = [
    ['id', container.id],
    ['hostname', container.hostname],
    ['state', container.state + (container.state_reason ? ` (${container.state_reason})` : '')],
    ['url', container.url ?? '-'],
    ['image', container.image],
    ['port', container.port],
    ['command', container.command ? container.command.join(' ') : '(image default)'],
    ['size', `${container.cpu_cores} CPU, ${container.memory_mb} MB memory, ${container.disk_gb} GB disk`],
    [
      'env',
      Object.keys(container.env).length
        ? Object.entries(container.env)
            .map(([name, value]) => `${name}=${value}`)
            .join(' ')
        : '-',
    ],
    ['created', container.created_at],
    ['updated', container.updated_at],
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  for (const [name, value] of rows) out(`${name.padEnd(width)}  ${value}`);
}

const printJson = (data) => out(JSON.stringify(data, null, 2));

/** `NAME=VALUE`, as `--env` and `env set` take it. */
function envPair(pair) {
  const equals = pair.indexOf('=');
  if (equals <= 0) throw new CliError(`Expected NAME=VALUE, got "${pair}"`, { exitCode: 2 });
  return [pair.slice(0, equals), pair.slice(equals + 1)];
}

const positiveNumber = (name) => (value) => {
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0) throw new CliError(`${name} must be a positive number, got "${value}"`, { exitCode: 2 });
  return number;
};

/** A container named by its id or its hostname. */
async function findContainer(api, name) {
  if (UUID.test(name)) return (await apiCall(api, 'GET', `/api/v1/containers/${name}`)).data;
  const found = (await apiList(api, '/api/v1/containers', { limit: 1000 })).find((container) => container.hostname === name);
  if (!found) throw new CliError(`No container named ${name}`, { code: 'NOT_FOUND' });
  return found;
}

/** Polls until the container's state settles (running, stopped or failed), with a spinner. */
async function untilSettled(api, container, verb) {
  const spin = await spinner(`${verb} ${container.hostname}: ${container.state}`);
  let current = container;
  while (!SETTLED_STATES.includes(current.state)) {
    await sleep(STATE_POLL_MS);
    current = (await apiCall(api, 'GET', `/api/v1/containers/${container.id}`)).data;
    spin.update(`${verb} ${container.hostname}: ${current.state}`);
  }
  if (current.state === 'failed') spin.error(`${container.hostname} failed${current.state_reason ? `: ${current.state_reason}` : ''}`);
  else spin.success(`${container.hostname} is ${current.state}`);
  return current;
}

function show(command, data, human) {
  if (globals(command).json) printJson(data);
  else human(data);
}

// login, logout, whoami

async function login(options, command) {
  const api = apiUrlOf(globals(command).api);
  const started = await oauthForm(api, '/api/v1/oauth/device_authorization', { client_id: CLI_CLIENT_ID, scope: CLI_SCOPES });
  if (started.status !== 200) {
    throw new CliError(started.body.error_description ?? `device authorization failed (HTTP ${started.status})`, {
      code: started.body.error,
    });
  }
  const device = started.body;
  out(`To sign in, open ${device.verification_uri_complete}`);
  out(`and check that it shows the code ${device.user_code}`);
  if (options.browser !== false && openBrowser(device.verification_uri_complete)) say('(opened in your browser)');
  let interval = device.interval ?? 5;
  const deadline = Date.now() + device.expires_in * 1000;
  const spin = await spinner('Waiting for approval in the browser…');
  for (;;) {
    await sleep(interval * 1000);
    if (Date.now() > deadline) {
      spin.error('The code expired');
      throw new CliError('The code expired before it was approved; run login again', { code: 'expired_token' });
    }
    const polled = await oauthForm(api, '/api/v1/oauth/token', {
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
  const { data: me } = await apiCall(api, 'GET', '/api/v1/users/me');
  spin.success(`Signed in to ${api}`);
  out(`Signed in to ${api} as ${me.email}`);
}

async function logout(_options, command) {
  const api = apiUrlOf(globals(command).api);
  const entry = readCredentials().apis?.[api];
  if (!entry) {
    out(`Not signed in to ${api}`);
    return;
  }
  // RFC 7009: revoking the refresh token ends its grant, so the access token stops too.
  const revoked = await oauthForm(api, '/api/v1/oauth/token/revoke', {
    token: entry.refresh_token,
    token_type_hint: 'refresh_token',
    client_id: entry.client_id ?? CLI_CLIENT_ID,
  });
  forgetSignIn(api);
  if (revoked.status !== 200) throw new CliError(revoked.body.error_description ?? `HTTP ${revoked.status}`, { code: revoked.body.error });
  out(`Signed out of ${api}`);
}

async function whoami(_options, command) {
  const api = apiUrlOf(globals(command).api);
  const { data } = await apiCall(api, 'GET', '/api/v1/users/me');
  show(command, data, (me) => out(`${me.email} (${me.role}) on ${api}`));
}

// containers

const containerColumns = [
  ['HOSTNAME', (container) => container.hostname],
  ['STATE', (container) => container.state],
  ['IMAGE', (container) => container.image],
  ['SIZE', (container) => `${container.cpu_cores}cpu/${container.memory_mb}MB`],
  ['URL', (container) => container.url ?? '-'],
  ['ID', (container) => container.id],
];

async function list(_options, command) {
  const api = apiUrlOf(globals(command).api);
  const containers = await apiList(api, '/api/v1/containers', { limit: 1000 });
  show(command, containers, (rows) =>
    rows.length ? table(rows, containerColumns) : say('No containers yet; create one with: container-hosting create HOSTNAME'),
  );
}

async function create(hostname, commandWords, options, command) {
  const api = apiUrlOf(globals(command).api);
  const body = {
    hostname,
    ...(options.image ? { image: options.image } : {}),
    ...(options.port ? { port: options.port } : {}),
    ...(options.cpu ? { cpu_cores: options.cpu } : {}),
    ...(options.memory ? { memory_mb: options.memory } : {}),
    ...(options.disk ? { disk_gb: options.disk } : {}),
    ...(options.env.length ? { env: Object.fromEntries(options.env.map(envPair)) } : {}),
    ...(commandWords.length ? { command: commandWords } : {}),
  };
  const { data } = await apiCall(api, 'POST', '/api/v1/containers', { body });
  const settled = options.wait === false || globals(command).json ? data : await untilSettled(api, data, 'Creating');
  show(command, settled, details);
}

async function get(name, _options, command) {
  const api = apiUrlOf(globals(command).api);
  show(command, await findContainer(api, name), details);
}

const lifecycle = (action, verb) => async (name, options, command) => {
  const api = apiUrlOf(globals(command).api);
  const container = await findContainer(api, name);
  const { data } = await apiCall(api, 'POST', `/api/v1/containers/${container.id}/${action}`);
  const settled = options.wait === false || globals(command).json ? data : await untilSettled(api, data, verb);
  show(command, settled, details);
};

async function remove(name, _options, command) {
  const api = apiUrlOf(globals(command).api);
  const container = await findContainer(api, name);
  const { data } = await apiCall(api, 'DELETE', `/api/v1/containers/${container.id}`);
  show(command, data, () => out(`Deleted ${container.hostname}`));
}

const logLine = (line) => `${line.timestamp} ${line.stream === 'stderr' ? 'err' : 'out'} ${line.message}`;

async function logs(name, options, command) {
  const api = apiUrlOf(globals(command).api);
  const json = globals(command).json;
  const container = await findContainer(api, name);
  const path = `/api/v1/containers/${container.id}/logs`;
  const print = (line) => out(json ? JSON.stringify(line) : logLine(line));
  const first = await apiCall(api, 'GET', path, { query: { limit: options.limit, since: options.since } });
  if (!options.follow) {
    if (json) printJson(first.data);
    else first.data.forEach(print);
    return;
  }
  first.data.forEach(print);
  // Follows by asking for the lines since the last one printed; lines with that very timestamp
  // come back again and are skipped by content, so none prints twice.
  let last = first.data.at(-1)?.timestamp ?? options.since ?? new Date().toISOString();
  let seenAtLast = new Set(first.data.filter((line) => line.timestamp === last).map(JSON.stringify));
  // Ctrl-C (or a TERM from a supervisor) ends following with exit 0.
  const stop = new Promise((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  for (;;) {
    const tick = await Promise.race([sleep(FOLLOW_POLL_MS).then(() => 'tick'), stop.then(() => 'stop')]);
    if (tick === 'stop') return;
    const next = (await apiList(api, path, { since: last, limit: 1000 })).filter((line) => !seenAtLast.has(JSON.stringify(line)));
    next.forEach(print);
    if (next.length) {
      const newest = next.at(-1).timestamp;
      if (newest !== last) seenAtLast = new Set();
      last = newest;
      for (const line of next) if (line.timestamp === last) seenAtLast.add(JSON.stringify(line));
    }
  }
}

async function metrics(name, _options, command) {
  const api = apiUrlOf(globals(command).api);
  const container = await findContainer(api, name);
  const { data } = await apiCall(api, 'GET', `/api/v1/containers/${container.id}/metrics`);
  show(command, data, (figures) => {
    out(`cpu     ${figures.cpu_percent}%`);
    out(`memory  ${figures.memory_used_mb} / ${figures.memory_total_mb} MB`);
    out(`disk    ${figures.disk_used_gb} / ${figures.disk_total_gb} GB`);
  });
}

async function changeEnv(name, change, command) {
  const api = apiUrlOf(globals(command).api);
  const container = await findContainer(api, name);
  // PATCH replaces the whole env, so the change is applied to the current set.
  const env = change({ ...container.env });
  const { data } = await apiCall(api, 'PATCH', `/api/v1/containers/${container.id}`, { body: { env } });
  show(command, data, details);
}

async function open(name, options, command) {
  const api = apiUrlOf(globals(command).api);
  const container = await findContainer(api, name);
  if (!container.url) throw new CliError(`${container.hostname} has no public URL on this deployment`, { code: 'NO_URL' });
  out(container.url);
  if (options.browser !== false) openBrowser(container.url);
}

// the command line

program
  .name('container-hosting')
  .description('Run containers on the container hosting service from your terminal.')
  .version(process.env.npm_package_version ?? '0.1.0')
  .addOption(new Option('--api <url>', 'the service, e.g. http://127.0.0.1:3000').env('CONTAINER_HOSTING_API'))
  .option('--json', "print the API's data as JSON")
  .showHelpAfterError()
  .exitOverride();

program.addHelpText(
  'after',
  `
Sign in with "container-hosting login"; credentials are kept per API in $XDG_CONFIG_HOME/container-hosting/
(mode 0600). CONTAINER_HOSTING_TOKEN (a personal access token) is used instead when set.
Exit codes: 0 success, 1 API or network error, 2 usage.`,
);

program
  .command('login')
  .description('sign in with the device authorization grant')
  .option('--no-browser', 'never open a browser')
  .action(login);
program.command('logout').description('revoke the stored sign-in and forget it').action(logout);
program.command('whoami').description('who the stored sign-in or token acts as').action(whoami);
program.command('ls').alias('list').description('list your containers').action(list);

const collect = (value, previous) => [...previous, value];
program
  .command('create')
  .description('create a container; words after -- are its command')
  .argument('<hostname>', 'its name, also its URL: 1 to 63 lowercase letters, digits or hyphens')
  .argument('[command...]', 'the command to run instead of the image default (after --)')
  .option('--image <image>', 'container image')
  .option('--port <port>', 'the port it listens on', positiveNumber('--port'))
  .option('--env <NAME=VALUE>', 'an environment variable (repeatable)', collect, [])
  .option('--cpu <cores>', 'CPU cores: 1, 2, 4, 8 or 16', positiveNumber('--cpu'))
  .option('--memory <mb>', 'memory in MB', positiveNumber('--memory'))
  .option('--disk <gb>', 'disk in GB (18 to 32)', positiveNumber('--disk'))
  .option('--no-wait', 'do not wait for it to start')
  .action(create);

program.command('get').description('show one container').argument('<container>', 'hostname or id').action(get);
for (const [name, action, verb] of [
  ['start', 'start', 'Starting'],
  ['stop', 'stop', 'Stopping'],
  ['restart', 'restart', 'Restarting'],
]) {
  program
    .command(name)
    .description(`${name} a container and wait until its state settles`)
    .argument('<container>', 'hostname or id')
    .option('--no-wait', 'do not wait for the state to settle')
    .action(lifecycle(action, verb));
}
program.command('rm').alias('delete').description('delete a container').argument('<container>', 'hostname or id').action(remove);
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
  .action((name, pairs, _options, command) => {
    const entries = pairs.map(envPair);
    return changeEnv(name, (current) => Object.assign(current, Object.fromEntries(entries)), command);
  });
env
  .command('unset')
  .description('remove variables (PATCH)')
  .argument('<container>', 'hostname or id')
  .argument('<NAME...>', 'variables to remove')
  .action((name, names, _options, command) =>
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
  .command('open')
  .description("print a container's URL and open it in the browser when there is one")
  .argument('<container>', 'hostname or id')
  .option('--no-browser', 'only print the URL')
  .action(open);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // Help and version exit 0; every other parsing failure is a usage error.
    process.exitCode = error.exitCode === 0 ? 0 : 2;
  } else if (error instanceof CliError) {
    say(`error: ${error.message}${error.code ? ` (${error.code})` : ''}`);
    process.exitCode = error.exitCode;
  } else {
    say(`error: ${error.message}`);
    process.exitCode = 1;
  }
}
