/**
 * `npm start`: the whole service on this machine. DynamoDB Local holds the table, the
 * local container runtime runs containers as processes, and every route's handler is
 * served over HTTP. See product.md section 7.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startDynamoDbLocal, type DynamoDbLocal } from '../lib/local/dynamodb-local.js';
import { runShutdown } from '../lib/local/lifecycle.js';
import type { LocalServer } from '../lib/local/server.js';
import { ensureTable } from '../lib/local/table.js';

const IN_MEMORY = ':memory:';

// The SDK's notice that it will need Node 22 from 2027; Lambda runs nodejs22.x already.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? '127.0.0.1';
const dataDirSetting = process.env.DATA_DIR ?? '.data';
const inMemory = dataDirSetting === IN_MEMORY;
const adminEmail = process.env.ADMIN_EMAIL ?? 'admin@example.com';
const adminPassword = process.env.ADMIN_PASSWORD || undefined;

let dynamoDb: DynamoDbLocal | undefined;
let server: LocalServer | undefined;
let temporaryDir: string | undefined;
let shuttingDown = false;

async function main(): Promise<void> {
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`PORT must be a port number, got ${process.env.PORT}`);

  const dataDir = inMemory ? undefined : resolve(dataDirSetting);
  if (inMemory) temporaryDir = await mkdtemp(join(tmpdir(), 'container-hosting-'));
  const containerDir = join(dataDir ?? temporaryDir!, 'containers');

  let endpoint = process.env.DYNAMODB_ENDPOINT;
  if (endpoint) {
    console.log(`Using DynamoDB at ${endpoint} (DYNAMODB_ENDPOINT is set)`);
  } else {
    dynamoDb = await startDynamoDbLocal({ dataDir: dataDir && join(dataDir, 'dynamodb') });
    endpoint = dynamoDb.endpoint;
  }

  // lib/config reads these at module load, so they must be set before any handler is imported.
  setDefaultEnv({
    DYNAMODB_ENDPOINT: endpoint,
    TABLE_NAME: 'container-hosting',
    CONTAINER_RUNTIME: 'local',
    LOCAL_CONTAINER_DIR: containerDir,
    ALLOW_INSECURE_REDIRECT_URIS: 'true',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  });
  await ensureTable(endpoint, process.env.TABLE_NAME!);

  await ensureAdmin();

  const { startLocalServer } = await import('../lib/local/server.js');
  server = await startLocalServer({ host, port });
  console.log(`Container hosting service listening on ${server.url}`);
}

function setDefaultEnv(defaults: Record<string, string>): void {
  for (const [name, value] of Object.entries(defaults)) process.env[name] ||= value;
}

async function ensureAdmin(): Promise<void> {
  const { ensureAdminUser } = await import('../lib/identity/admin-bootstrap.js');
  const { created, generatedPassword } = await ensureAdminUser(adminEmail, adminPassword);
  if (!created) console.log(`Admin ${adminEmail} already exists`);
  else if (generatedPassword) console.log(`Admin ${adminEmail} created with password ${generatedPassword} (shown once)`);
  else console.log(`Admin ${adminEmail} created with the password from ADMIN_PASSWORD`);
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
    console.error(`Received ${signal} again; exiting without cleaning up.`);
    // The exit hook of DynamoDB Local still kills the Java process.
    process.exit(1);
  }
  shuttingDown = true;
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
