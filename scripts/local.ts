/**
 * `npm start`: the whole service on this machine. DynamoDB Local holds the table, containers
 * run on a Docker Engine API (Docker, or Podman's service) when one answers, else as
 * processes, and every route's handler is served over HTTP. See README.md.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ensureKeyFile } from '../lib/local/refresh-grace-key-file.js';
import { startDynamoDbLocal, type DynamoDbLocal } from '../lib/local/dynamodb-local.js';
import { onShutdown, runShutdown } from '../lib/local/lifecycle.js';
import { startPodmanService } from '../lib/local/podman-service.js';
import { makePrivate } from '../lib/local/private-dir.js';
import { logFormatOf, useReadableLogs } from '../lib/local/readable-log.js';
import { chooseLocalRuntime } from '../lib/local/runtime-choice.js';
import type { LocalServer } from '../lib/local/server.js';
import { ensureTable } from '../lib/local/table.js';

const IN_MEMORY = ':memory:';

// The SDK's notice that it will need Node 22 from 2027; Lambda runs nodejs22.x already.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const port = Number(process.env.PORT ?? 3000);
const dynamoDbPort = process.env.DYNAMODB_PORT ? Number(process.env.DYNAMODB_PORT) : undefined;
const host = process.env.HOST ?? '127.0.0.1';
const dataDirSetting = process.env.DATA_DIR ?? '.data';
const inMemory = dataDirSetting === IN_MEMORY;
/**
 * DynamoDB Local with `-inMemory` while containers keep their DATA_DIR: the store node-oidc-provider
 * runs on in the refresh benchmark (../shared/bench, `--store dynamodb`), so both sides meet the same
 * DynamoDB Local. Its data is gone when the stack stops.
 */
const dynamoDbInMemory = inMemory || process.env.DYNAMODB_IN_MEMORY === 'true';
const adminEmail = process.env.ADMIN_EMAIL ?? 'admin@example.com';
const adminPassword = process.env.ADMIN_PASSWORD || undefined;

let dynamoDb: DynamoDbLocal | undefined;
let server: LocalServer | undefined;
let temporaryDir: string | undefined;
let shuttingDown = false;
let shutdownRequestedAt = 0;

/**
 * tsx (the `start` script) relays a signal to this process again when this process has not
 * acknowledged it within 30 ms, which on a busy machine happens, so one Ctrl-C can arrive
 * twice. A second one this soon is that, not a request to force.
 */
const REPEATED_SIGNAL_MS = 1_000;

async function main(): Promise<void> {
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`PORT must be a port number, got ${process.env.PORT}`);
  if (dynamoDbPort !== undefined && !(Number.isInteger(dynamoDbPort) && dynamoDbPort > 0 && dynamoDbPort <= 65_535)) {
    throw new Error(`DYNAMODB_PORT must be a port number, got ${process.env.DYNAMODB_PORT}`);
  }
  if (logFormatOf(process.env.LOG_FORMAT, Boolean(process.stdout.isTTY)) === 'readable') useReadableLogs();
  // Before anything is started or created: a stack that cannot listen must leave no admin and print no password.
  if (port !== 0) await assertPortFree(host, port);

  const runtime = await chooseLocalRuntime({
    requested: process.env.CONTAINER_RUNTIME,
    dockerHost: process.env.DOCKER_HOST,
    // When nothing answers at DOCKER_HOST: Podman's service, at PODMAN_SOCKET (docs/runtimes.md, "Local container runtimes").
    startPodman: () => startPodmanService({ socket: process.env.PODMAN_SOCKET, stateDir: process.env.PODMAN_STATE_DIR }),
  });
  if (runtime.kind === 'docker') {
    const { podman } = runtime;
    if (podman) {
      const asked = process.env.DOCKER_HOST || 'the default Docker socket';
      if (podman.pid === undefined) console.log(`Nothing answers at ${asked}; using Podman's API service at ${podman.dockerHost}`);
      else {
        console.log(
          `Nothing answers at ${asked}; started Podman's API service at ${podman.dockerHost} (pid ${podman.pid}), stopped with the stack`,
        );
        // Registered first, so it runs last: the engine's containers are stopped before their engine.
        onShutdown("Podman's API service", () => podman.stop());
      }
    }
    process.env.DOCKER_HOST = runtime.dockerHost;
    console.log(`Containers run on ${runtime.engine.name} ${runtime.engine.version} at ${runtime.dockerHost} (docker runtime)`);
  } else {
    console.log(`Containers run as processes of this OS user (process runtime; ${runtime.reason}): trusted code only`);
  }

  const dataDir = inMemory ? undefined : resolve(dataDirSetting);
  // The database, its key and the refresh-grace key are this OS user's alone.
  if (dataDir) await makePrivate(dataDir);
  if (inMemory) temporaryDir = await mkdtemp(join(tmpdir(), 'container-hosting-'));
  const containerDir = join(dataDir ?? temporaryDir!, 'containers');

  const tableName = process.env.TABLE_NAME || 'container-hosting';
  let endpoint = process.env.DYNAMODB_ENDPOINT;
  let credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  if (endpoint) {
    console.log(`Using DynamoDB at ${endpoint}, table ${tableName} (DYNAMODB_ENDPOINT is set)`);
  } else {
    dynamoDb = await startDynamoDbLocal({
      dataDir: dynamoDbInMemory ? undefined : dataDir && join(dataDir, 'dynamodb'),
      port: dynamoDbPort,
    });
    endpoint = dynamoDb.endpoint;
    // This stack's database is the one of its own random access key id (lib/local/dynamodb-local.ts).
    credentials = dynamoDb.credentials;
    process.env.AWS_ACCESS_KEY_ID = credentials.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = credentials.secretAccessKey;
    if (dynamoDb.killedLeftoverPid)
      console.log(`Stopped the DynamoDB Local an earlier run left running (pid ${dynamoDb.killedLeftoverPid})`);
    // What `npm run admin` needs: DYNAMODB_ENDPOINT and TABLE_NAME.
    console.log(`DynamoDB Local on ${endpoint}, table ${tableName}`);
    if (dataDir && !dynamoDbInMemory)
      console.log(`Its access key id (npm run admin reads it from there): ${join(dataDir, 'dynamodb', 'access-key')}`);
  }

  // Containers answer at http://{hostname}.localhost:{port}/, so the port must be known before config loads.
  const listenPort = port === 0 ? await freeLoopbackPort(host) : port;

  // lib/config reads these at module load, so they must be set before any handler is imported.
  process.env.CONTAINER_RUNTIME = runtime.kind;
  setDefaultEnv({
    // The issuer and every absolute URL the service prints (lib/http/public-base-url.ts).
    PUBLIC_BASE_URL: `http://${publicHostOf(host)}:${listenPort}`,
    APPS_DOMAIN: `localhost:${listenPort}`,
    APPS_URL_SCHEME: 'http',
    DYNAMODB_ENDPOINT: endpoint,
    TABLE_NAME: tableName,
    LOCAL_CONTAINER_DIR: containerDir,
    ALLOW_INSECURE_REDIRECT_URIS: 'true',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    // The refresh retry grace's key (docs/oauth.md, "Refresh retries"), made 0600 on first start.
    REFRESH_GRACE_KEY_FILE: join(dataDir ?? temporaryDir!, 'refresh-grace.key'),
    // Containers' registry credentials, a 0600 file each in a 0700 directory (docs/api.md, "Private images").
    REGISTRY_CREDENTIALS_DIR: join(dataDir ?? temporaryDir!, 'registry-credentials'),
  });
  await ensureKeyFile(process.env.REFRESH_GRACE_KEY_FILE!);
  await ensureTable(endpoint, process.env.TABLE_NAME!);

  await ensureAdmin();
  await recoverContainers();
  const { localRunPolicyNotice } = await import('../lib/wiring/local-containers.js');
  console.log(localRunPolicyNotice());

  const { startLocalServer } = await import('../lib/local/server.js');
  const { localContainerHosting } = await import('../lib/wiring/local-hosting.js');
  server = await startLocalServer({ host, port: listenPort, containers: localContainerHosting });
  console.log(`Container hosting service listening on ${server.url}`);
  console.log(`Console: ${process.env.PUBLIC_BASE_URL}/console (sign in as ${adminEmail})`);
}

/** Refuses a port something else listens on, naming PORT: the probe binds it as the server will, then lets it go. */
async function assertPortFree(onHost: string, wanted: number): Promise<void> {
  const probe = createServer();
  try {
    await new Promise<void>((resolveListen, reject) => probe.once('error', reject).listen(wanted, onHost, resolveListen));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') {
      throw new Error(
        `port ${wanted} on ${onHost} is already in use (another stack, or another program); set PORT to a free one, e.g. PORT=${wanted + 1} npm start`,
      );
    }
    if (code === 'EACCES') throw new Error(`port ${wanted} on ${onHost} needs privileges this user lacks; set PORT to one above 1023`);
    throw error;
  }
  await new Promise((resolveClose) => probe.close(resolveClose));
}

async function freeLoopbackPort(onHost: string): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolveListen, reject) => probe.once('error', reject).listen(0, onHost, resolveListen));
  const { port: free } = probe.address() as AddressInfo;
  await new Promise((resolveClose) => probe.close(resolveClose));
  return free;
}

/** The stack's own address as a browser writes it; a wildcard address is reached as localhost. */
function publicHostOf(listenHost: string): string {
  if (listenHost === '0.0.0.0' || listenHost === '::') return 'localhost';
  return listenHost.includes(':') ? `[${listenHost}]` : listenHost;
}

function setDefaultEnv(defaults: Record<string, string>): void {
  for (const [name, value] of Object.entries(defaults)) process.env[name] ||= value;
}

async function ensureAdmin(): Promise<void> {
  const { ensureAdminUser } = await import('../lib/identity/admin-bootstrap.js');
  const { identityService } = await import('../lib/wiring/identity.js');
  const { created, generatedPassword } = await ensureAdminUser(identityService, adminEmail, adminPassword);
  if (!created) console.log(`Admin ${adminEmail} already exists`);
  else if (generatedPassword) console.log(`Admin ${adminEmail} created with password ${generatedPassword} (shown once)`);
  else console.log(`Admin ${adminEmail} created with the password from ADMIN_PASSWORD`);
}

/** Containers that ran when the last run ended (Ctrl-C, a crash, a reboot) run again; after a crash, leftovers go first. */
async function recoverContainers(): Promise<void> {
  const { recoverLocalContainers } = await import('../lib/wiring/local-containers.js');
  const { processesKilled, containersResumed, containersStopped } = await recoverLocalContainers();
  if (processesKilled > 0) console.log(`Stopped ${processesKilled} container process(es) an earlier run left running`);
  if (containersResumed > 0) console.log(`Starting ${containersResumed} container(s) again that were running when the last run ended`);
  if (containersStopped > 0)
    console.log(
      `Left ${containersStopped} container(s) stopped that were running when the last run ended: this runtime may not run their owners' code`,
    );
}

/** Stops everything in the reverse order of starting it; containers still need the table. */
async function shutDown(): Promise<void> {
  await server?.close().catch((error: unknown) => console.error('Closing the HTTP server failed:', error));
  await runShutdown();
  await dynamoDb?.stop();
  if (temporaryDir) await rm(temporaryDir, { recursive: true, force: true });
}

function onSignal(signal: NodeJS.Signals): void {
  if (shuttingDown) {
    if (Date.now() - shutdownRequestedAt < REPEATED_SIGNAL_MS) return;
    console.error(`Received ${signal} again; exiting without cleaning up.`);
    // The exit hook of DynamoDB Local still kills the Java process.
    process.exit(1);
  }
  shuttingDown = true;
  shutdownRequestedAt = Date.now();
  console.log(`Received ${signal}; shutting down (press Ctrl-C again to force).`);
  void shutDown().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error('Shutdown failed:', error);
      process.exit(1);
    },
  );
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, onSignal);

try {
  await main();
} catch (error) {
  console.error('Could not start the local stack:', error instanceof Error ? error.message : error);
  if (!shuttingDown) {
    shuttingDown = true;
    await shutDown().catch(() => undefined);
    process.exit(1);
  }
}
