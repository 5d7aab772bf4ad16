import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import { call } from './api-client.js';
import { pollUntil } from './poll.js';

/*
 * `npm start` as a separate process, as a person runs it: what the npm-start tests in test/e2e
 * and test/engine, and README's first steps (test/support/first-steps.ts), start.
 */

export const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));

/** This test process's own table, directories, credentials and log level: a stack started as a person starts it inherits none. */
export const TEST_PROCESS_SETTINGS = [
  'DYNAMODB_ENDPOINT',
  'TABLE_NAME',
  'LOCAL_CONTAINER_DIR',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'LOG_LEVEL',
];

/** This process's environment without `leftOut` (TEST_PROCESS_SETTINGS unless told), then `env`. */
export function environmentWith(env: NodeJS.ProcessEnv, leftOut: string[] = TEST_PROCESS_SETTINGS): NodeJS.ProcessEnv {
  const fullEnv: NodeJS.ProcessEnv = { ...process.env };
  for (const name of leftOut) delete fullEnv[name];
  return { ...fullEnv, ...env };
}

export interface SpawnedStack {
  child: ChildProcess;
  /** Its stdout and stderr so far, as they came. */
  output: { text: string };
}

/**
 * `npm start`'s own command (scripts/local.ts, without npm in between) with exactly `env`, in a
 * process group of its own as a terminal gives it, so a test can Ctrl-C or kill all of it.
 */
export function spawnNpmStart(env: NodeJS.ProcessEnv): SpawnedStack {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/local.ts'], {
    cwd: repositoryRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const output = { text: '' };
  child.stdout!.on('data', (chunk: Buffer) => (output.text += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output.text += chunk.toString('utf8')));
  return { child, output };
}

/** The address the stack says it listens on, once it says so; null if it exits first or `timeoutMs` passes. */
export async function listeningAddress(stack: SpawnedStack, timeoutMs: number): Promise<string | null> {
  const listening = await pollUntil(
    async () => /listening on (http:\/\/\S+)/.exec(stack.output.text),
    (match) => match !== null || stack.child.exitCode !== null,
    timeoutMs,
  );
  return listening?.[1] ?? null;
}

/** Every stack spawned through it is killed, with its process group, after the file's tests. */
export function useSpawnedStacks(): { spawn(env: NodeJS.ProcessEnv): SpawnedStack } {
  const running: ChildProcess[] = [];
  afterAll(() => {
    for (const child of running) if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
  });
  return {
    spawn(env) {
      const stack = spawnNpmStart(env);
      running.push(stack.child);
      return stack;
    },
  };
}

/** A session of the stack's first admin (ADMIN_EMAIL, admin@example.com unless set), as call options. */
export async function signInAsAdmin(
  baseUrl: string,
  password: string,
  email = 'admin@example.com',
): Promise<{ token: string; headers: Record<string, string> }> {
  const session = await call(baseUrl, 'POST', '/api/v1/sessions', { body: { email, password } });
  if (session.status !== 200) throw new Error(`sign-in failed: ${session.status} ${session.text}`);
  return { token: session.body.data.token, headers: { 'x-csrf-token': session.body.data.csrf_token } };
}

/** Waits until the stack listens; throws with its output if it exits first or takes longer than `timeoutMs`. */
export async function whenListening(stack: SpawnedStack, timeoutMs: number): Promise<SpawnedStack & { baseUrl: string }> {
  const baseUrl = await listeningAddress(stack, timeoutMs);
  if (!baseUrl) throw new Error(`The stack did not start:\n${stack.output.text}`);
  return { ...stack, baseUrl };
}

/**
 * `npm start` on the engine, as the engine tests start it: this process's environment with the
 * file's own container directory (so the engine setup's clean-up finds what the stack leaves), a
 * port of its choosing and no log, then `settings`; answers once it listens.
 */
export async function startOnEngine(
  stacks: { spawn(env: NodeJS.ProcessEnv): SpawnedStack },
  settings: { DATA_DIR: string; TABLE_NAME: string; ADMIN_PASSWORD: string; DOCKER_HOST: string; [name: string]: string },
  timeoutMs = 60_000,
): Promise<{ child: ChildProcess; baseUrl: string; output: () => string }> {
  const env = {
    ...process.env,
    PORT: '0',
    LOCAL_CONTAINER_DIR: process.env.LOCAL_CONTAINER_DIR,
    CONTAINER_RUNTIME: 'docker',
    LOG_LEVEL: 'silent',
  };
  const started = await whenListening(stacks.spawn({ ...env, ...settings }), timeoutMs);
  return { child: started.child, baseUrl: started.baseUrl, output: () => started.output.text };
}
