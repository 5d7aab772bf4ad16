import { execFile, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/api-client.js';
import { environmentWith, spawnNpmStart, TEST_PROCESS_SETTINGS } from '../support/npm-start.js';
import { isRunning } from '../support/processes.js';

const execFileAsync = promisify(execFile);

const ADMIN_EMAIL = 'admin@example.com';
const ADMIN_PASSWORD = 'correct horse battery staple';

interface Stack {
  process: ChildProcess;
  baseUrl: string;
  output: ReturnType<typeof collectOutput>;
}

/*
 * The stack runs three times on one DATA_DIR, as a developer would run it: a first start,
 * a start after a clean Ctrl-C, and a start after the stack was killed with SIGKILL.
 */
// A cold start (tsx, DynamoDB Local's JVM) takes about 5 s alone and has taken over 30 s on a
// loaded 2-core machine, so each step may take up to 50 s and each test up to two minutes.
describe('npm start', { timeout: 120_000 }, () => {
  let dataDir: string;
  let dynamoDbPort: number;
  const stacks: ChildProcess[] = [];
  /** Every process group seen, so that a failing run leaves nothing behind. */
  const processGroups = new Set<number>();
  let containerId: string;
  /** The container's process in the first run, which Ctrl-C ended. */
  let firstRunPid: number | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'npm-start-'));
    dynamoDbPort = await freePort();
  });

  afterAll(async () => {
    for (const stack of stacks) {
      if (stack.exitCode !== null || stack.signalCode !== null) continue;
      for (const pid of await descendantsOf(stack.pid!)) processGroups.add(pid);
      processGroups.add(stack.pid!);
    }
    for (const group of processGroups) killGroup(group);
    await rm(dataDir, { recursive: true, force: true });
  });

  async function startStack(env: NodeJS.ProcessEnv = {}): Promise<Stack> {
    const port = await freePort();
    // This file's own test table and directories must not leak into the stack under test; its own
    // process group, as a terminal gives it, so the test can Ctrl-C it and clean up all of it.
    const { child } = spawnNpmStart(
      environmentWith({ PORT: String(port), DATA_DIR: dataDir, ADMIN_PASSWORD, ...env }, [
        ...TEST_PROCESS_SETTINGS,
        'PROCESS_RUNTIME_TRUSTS_ALL_ACCOUNTS',
      ]),
    );
    stacks.push(child);
    processGroups.add(child.pid!);
    const output = collectOutput(child);
    const listening = await output.waitFor(/listening on (http:\/\/\S+)/, 50_000);
    expect(listening[1]).toBe(`http://127.0.0.1:${port}`);
    return { process: child, baseUrl: listening[1]!, output };
  }

  async function signInAsAdmin(baseUrl: string): Promise<{ token: string; headers: Record<string, string> }> {
    const response = await call(baseUrl, 'POST', '/api/v1/sessions', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    expect(response.status).toBe(200);
    return { token: response.body.data.token, headers: { 'x-csrf-token': response.body.data.csrf_token } };
  }

  const USER_EMAIL = 'user@example.com';
  const USER_PASSWORD = 'an ordinary person of this machine';

  /** An ordinary account: created by the admin when `admin` is given, else signed in again. */
  async function signInAsUser(baseUrl: string, admin?: { token: string; headers: Record<string, string> }) {
    if (admin) {
      const created = await call(baseUrl, 'POST', '/api/v1/users', { ...admin, body: { email: USER_EMAIL, password: USER_PASSWORD } });
      expect(created.status).toBe(200);
    }
    const response = await call(baseUrl, 'POST', '/api/v1/sessions', { body: { email: USER_EMAIL, password: USER_PASSWORD } });
    expect(response.status).toBe(200);
    return { token: response.body.data.token as string, headers: { 'x-csrf-token': response.body.data.csrf_token as string } };
  }

  async function containerState(baseUrl: string, auth: { token: string }): Promise<string> {
    const response = await call(baseUrl, 'GET', `/api/v1/containers/${containerId}`, auth);
    expect(response.status).toBe(200);
    return response.body.data.state;
  }

  /** The pid the container's process wrote once it listened (scripts/local-container.mjs). */
  async function containerPid(): Promise<number> {
    const readyFile = join(dataDir, 'containers', containerId, 'ready');
    const deadline = Date.now() + 5_000;
    for (;;) {
      const ready = await readFile(readyFile, 'utf8').catch(() => undefined);
      if (ready) {
        const { pid } = JSON.parse(ready) as { pid: number };
        processGroups.add(pid);
        return pid;
      }
      if (Date.now() > deadline) throw new Error(`The container never wrote ${readyFile}`);
      await sleep(50);
    }
  }

  /** The pid of a live process of the container that is not `previous` (a start after a restart writes its ready file anew). */
  async function newContainerPid(previous?: number): Promise<number> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const pid = await containerPid();
      if ((pid !== previous && isRunning(pid)) || Date.now() > deadline) return pid;
      await sleep(50);
    }
  }

  async function dynamoDbLocalOf(stack: Stack): Promise<{ pid: number; port: number }> {
    const dynamoDb = await findDynamoDbLocal(stack.process.pid!);
    expect(dynamoDb, 'a DynamoDB Local process under the stack').toBeDefined();
    processGroups.add(dynamoDb!.pid);
    return dynamoDb!;
  }

  async function interrupt(stack: Stack): Promise<void> {
    const exited = once(stack.process, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    // As a terminal's Ctrl-C: to the whole foreground process group.
    process.kill(-stack.process.pid!, 'SIGINT');
    const [exitCode] = await withTimeout(exited, 15_000, () => `npm start did not exit within 15 s:\n${stack.output.text()}`);
    expect(exitCode, stack.output.text()).toBe(0);
  }

  it('serves the API and runs containers as processes, then stops all of it on Ctrl-C', async () => {
    const stack = await startStack();
    expect(stack.output.text()).toMatch(/^DynamoDB Local on http:\/\/127\.0\.0\.1:\d+, table container-hosting$/m);
    expect(stack.output.text()).toContain(`Admin ${ADMIN_EMAIL} created`);
    const notFound = await call(stack.baseUrl, 'GET', '/no/such/route');
    expect(notFound.status).toBe(404);
    expect(notFound.body).toEqual({ error: { code: 'NOT_FOUND', message: 'No route for GET /no/such/route' } });

    const admin = await signInAsAdmin(stack.baseUrl);
    const created = await call(stack.baseUrl, 'POST', '/api/v1/containers', { ...admin, body: { hostname: 'npm-start' } });
    expect(created.status).toBe(200);
    containerId = created.body.data.id;
    expect(await pollState(() => containerState(stack.baseUrl, admin), 'running')).toBe('running');

    // The review's attack, by an ordinary account on HOST 127.0.0.1: a container that prints the server's environment.
    expect(stack.output.text()).toContain('Only admins may create or start containers on the process runtime');
    const user = await signInAsUser(stack.baseUrl, admin);
    const attack = await call(stack.baseUrl, 'POST', '/api/v1/containers', {
      ...user,
      body: {
        hostname: 'read-environ',
        command: [process.execPath, '-e', `process.stdout.write(require('fs').readFileSync('/proc/${stack.process.pid}/environ'))`],
      },
    });
    expect(attack.status).toBe(403);
    expect(attack.body.error).toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining('(the docker runtime)') });
    const container = await containerPid();
    firstRunPid = container;
    const dynamoDb = await dynamoDbLocalOf(stack);
    expect(isRunning(container)).toBe(true);

    await interrupt(stack);

    expect(isRunning(container)).toBe(false);
    expect(isRunning(dynamoDb.pid)).toBe(false);
    expect(await acceptsConnections(dynamoDb.port)).toBe(false);
    expect(await acceptsConnections(Number(new URL(stack.baseUrl).port))).toBe(false);
  });

  it('starts again on the same DATA_DIR, on a pinned DYNAMODB_PORT, trusting every account: the admin is still there and the container that ran runs again; the ordinary account may run one now', async () => {
    const stack = await startStack({ DYNAMODB_PORT: String(dynamoDbPort), PROCESS_RUNTIME_TRUSTS_ALL_ACCOUNTS: 'true' });
    expect(stack.output.text()).toContain(`DynamoDB Local on http://127.0.0.1:${dynamoDbPort}, table container-hosting\n`);
    expect(stack.output.text()).toContain(`Admin ${ADMIN_EMAIL} already exists`);
    expect(stack.output.text()).toContain('Starting 1 container(s) again that were running when the last run ended');
    const admin = await signInAsAdmin(stack.baseUrl);
    expect(await pollState(() => containerState(stack.baseUrl, admin), 'running')).toBe('running');
    const resumed = await call(stack.baseUrl, 'GET', `/api/v1/containers/${containerId}`, admin);
    expect(resumed.body.data.state_reason).toBe('started again: it was running when the service stopped');
    expect(isRunning(await newContainerPid(firstRunPid))).toBe(true);

    // The operator trusts every account now: the ordinary account of the first run gets a container.
    expect(stack.output.text()).toContain('Every account may run containers');
    const user = await signInAsUser(stack.baseUrl);
    const trusted = await call(stack.baseUrl, 'POST', '/api/v1/containers', { ...user, body: { hostname: 'trusted-user' } });
    expect(trusted.status).toBe(200);
    expect((await call(stack.baseUrl, 'DELETE', `/api/v1/containers/${trusted.body.data.id}`, user)).status).toBe(200);

    // A stop the owner asks for is one the next start keeps.
    const stopped = await call(stack.baseUrl, 'POST', `/api/v1/containers/${containerId}/stop`, admin);
    expect(stopped.body.data).toMatchObject({ state: 'stopped', state_reason: 'stopped on request' });
    const started = await call(stack.baseUrl, 'POST', `/api/v1/containers/${containerId}/start`, admin);

    expect(started.status).toBe(200);
    expect(started.body.data).toMatchObject({ state: 'running', state_reason: null });
    expect(isRunning(await newContainerPid())).toBe(true);
  });

  it('after the stack was killed with SIGKILL, a start ends what the last run left running and runs the container again', async () => {
    const previous = stacks.at(-1)!;
    const leftContainer = await containerPid();
    const leftDynamoDb = await findDynamoDbLocal(previous.pid!);
    expect(leftDynamoDb).toBeDefined();
    processGroups.add(leftDynamoDb!.pid);
    const killed = once(previous, 'exit');
    process.kill(-previous.pid!, 'SIGKILL');
    await killed;
    // Nothing stopped them: both are still running, the old DynamoDB Local on the pinned port.
    expect(isRunning(leftContainer)).toBe(true);
    expect(isRunning(leftDynamoDb!.pid)).toBe(true);

    const stack = await startStack({ DYNAMODB_PORT: String(dynamoDbPort) });

    expect(stack.output.text()).toContain(`Stopped the DynamoDB Local an earlier run left running (pid ${leftDynamoDb!.pid})`);
    expect(stack.output.text()).toContain('Stopped 1 container process(es) an earlier run left running');
    expect(stack.output.text()).toContain('Starting 1 container(s) again that were running when the last run ended');
    expect(isRunning(leftContainer)).toBe(false);
    expect(isRunning(leftDynamoDb!.pid)).toBe(false);
    const admin = await signInAsAdmin(stack.baseUrl);
    expect(await pollState(() => containerState(stack.baseUrl, admin), 'running')).toBe('running');
    expect(isRunning(await newContainerPid(leftContainer))).toBe(true);

    await interrupt(stack);
  });
});

async function pollState(read: () => Promise<string>, wanted: string, timeoutMs = 20_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await read();
    if (state === wanted || Date.now() > deadline) return state;
    await sleep(50);
  }
}

function collectOutput(child: ChildProcess): {
  text(): string;
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
} {
  let text = '';
  const listeners = new Set<() => void>();
  const append = (chunk: Buffer): void => {
    text += chunk.toString('utf8');
    for (const listener of listeners) listener();
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);

  return {
    text: () => text,
    waitFor: (pattern, timeoutMs) =>
      withTimeout(
        new Promise<RegExpMatchArray>((resolve, reject) => {
          const check = (): void => {
            const match = pattern.exec(text);
            if (match) resolve(match);
          };
          listeners.add(check);
          child.once('exit', (code) => reject(new Error(`Exited with ${code} before printing ${pattern}:\n${text}`)));
          check();
        }),
        timeoutMs,
        () => `No line matching ${pattern} within ${timeoutMs / 1000} s:\n${text}`,
      ),
  };
}

async function processTable(): Promise<Array<{ pid: number; ppid: number; args: string }>> {
  const { stdout } = await execFileAsync('ps', ['-e', '-o', 'pid=,ppid=,args=']);
  return stdout
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({ pid: Number(match[1]), ppid: Number(match[2]), args: match[3]! }));
}

async function descendantsOf(rootPid: number): Promise<Set<number>> {
  const processes = await processTable();
  const descendants = new Set([rootPid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const candidate of processes) {
      if (descendants.has(candidate.ppid) && !descendants.has(candidate.pid)) {
        descendants.add(candidate.pid);
        grew = true;
      }
    }
  }
  return descendants;
}

/** Walks the process tree under `rootPid` for the DynamoDB Local Java process and its port. */
async function findDynamoDbLocal(rootPid: number): Promise<{ pid: number; port: number } | undefined> {
  const descendants = await descendantsOf(rootPid);
  const java = (await processTable()).find((candidate) => descendants.has(candidate.pid) && candidate.args.includes('DynamoDBLocal.jar'));
  const port = java && /-port (\d+)/.exec(java.args)?.[1];
  return java && port ? { pid: java.pid, port: Number(port) } : undefined;
}

function killGroup(processGroup: number): void {
  try {
    process.kill(-processGroup, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function withTimeout<T>(promise: Promise<T>, timeoutMs: number, describeTimeout: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(describeTimeout())), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
