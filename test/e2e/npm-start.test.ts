import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));
const tsxCli = fileURLToPath(new URL('../../node_modules/tsx/dist/cli.mjs', import.meta.url));

describe('npm start', () => {
  let stack: ChildProcess | undefined;
  afterAll(() => {
    if (stack?.exitCode === null) stack.kill('SIGKILL');
  });

  it('serves the API, then stops everything it started on SIGINT', async () => {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), DATA_DIR: ':memory:', ADMIN_PASSWORD: 'correct horse battery staple' };
    // This file's own test table and directories must not leak into the stack under test.
    for (const name of ['DYNAMODB_ENDPOINT', 'TABLE_NAME', 'LOCAL_CONTAINER_DIR']) delete env[name];

    // The same command as the `start` script, without npm in between.
    stack = spawn(process.execPath, [tsxCli, 'scripts/local.ts'], { cwd: repositoryRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const output = collectOutput(stack);

    const listeningLine = await output.waitFor(/listening on (http:\/\/\S+)/, 60_000);
    const baseUrl = listeningLine[1]!;
    expect(baseUrl).toBe(`http://127.0.0.1:${port}`);
    expect(output.text()).toContain('Admin admin@example.com created');

    const response = await fetch(`${baseUrl}/no/such/route`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'No route for GET /no/such/route' } });

    const dynamoDb = await findDynamoDbLocal(stack.pid!);
    expect(dynamoDb, 'a DynamoDB Local process under the stack').toBeDefined();

    const exited = once(stack, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    stack.kill('SIGINT');
    const [exitCode] = await withTimeout(exited, 15_000, () => `npm start did not exit within 15 s:\n${output.text()}`);

    expect(exitCode).toBe(0);
    expect(isRunning(dynamoDb!.pid)).toBe(false);
    expect(await acceptsConnections(dynamoDb!.port)).toBe(false);
    expect(await acceptsConnections(port)).toBe(false);
  });
});

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

/** Walks the process tree under `rootPid` for the DynamoDB Local Java process and its port. */
async function findDynamoDbLocal(rootPid: number): Promise<{ pid: number; port: number } | undefined> {
  const { stdout } = await promisify(execFile)('ps', ['-e', '-o', 'pid=,ppid=,args=']);
  const processes = stdout
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({ pid: Number(match[1]), ppid: Number(match[2]), args: match[3]! }));

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
  const java = processes.find((candidate) => descendants.has(candidate.pid) && candidate.args.includes('DynamoDBLocal.jar'));
  const port = java && /-port (\d+)/.exec(java.args)?.[1];
  return java && port ? { pid: java.pid, port: Number(port) } : undefined;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
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
