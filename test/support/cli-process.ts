import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { buildCli } from '../../scripts/build-cli.js';

/** The CLI as package.json's `bin` names it, built as `npm ci` builds it (the `prepare` script). */
export const CLI = resolve(JSON.parse(readFileSync('package.json', 'utf8')).bin['container-hosting']);

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliSession {
  /** Starts the CLI; its output so far is readable while it runs. */
  start(
    args: string[],
    env?: Record<string, string>,
  ): { child: ChildProcess; output: { stdout: string; stderr: string }; done: Promise<CliRun> };
  run(args: string[], env?: Record<string, string>): Promise<CliRun>;
  /** A shell line (bash, so PIPESTATUS tells the CLI's own exit code), `$CLI` standing for `node <the CLI>`. */
  shell(line: string, env?: Record<string, string>): Promise<CliRun>;
  /** Ends every process it started that is still running. */
  killAll(): void;
}

/** Spawns `container-hosting` as a person runs it: its own environment, no terminal, an API and a credential. */
export function cliSession(baseEnv: () => Record<string, string>): CliSession {
  const spawned: ChildProcess[] = [];
  const launch = (command: string, args: string[], env: Record<string, string>) => {
    const child = spawn(command, args, {
      env: { PATH: process.env.PATH!, ...baseEnv(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    spawned.push(child);
    const output = { stdout: '', stderr: '' };
    child.stdout!.on('data', (chunk) => (output.stdout += chunk));
    child.stderr!.on('data', (chunk) => (output.stderr += chunk));
    const done = new Promise<CliRun>((resolveRun) => child.on('close', (code) => resolveRun({ code, ...output })));
    return { child, output, done };
  };
  return {
    start: (args, env = {}) => launch(process.execPath, [CLI, ...args], env),
    run: (args, env = {}) => launch(process.execPath, [CLI, ...args], env).done,
    shell: (line, env = {}) => launch('bash', ['-c', line], { CLI: `${process.execPath} ${CLI}`, ...env }).done,
    killAll: () => {
      for (const child of spawned) if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

/**
 * The CLI against a file's stack as its signed-in user's token. With `build` (the default) it is
 * built again from cli/src before the file's tests, so a test never runs a CLI older than its
 * source; whatever it left running is ended after them, before the stack closes.
 */
export function cliOn(stack: { readonly baseUrl: string; readonly token: string }, { build = true } = {}): CliSession {
  const cli = cliSession(() => ({ CONTAINER_HOSTING_API: stack.baseUrl, CONTAINER_HOSTING_TOKEN: stack.token, HOME: '/nonexistent' }));
  if (build) beforeAll(() => expect(buildCli()).toBe(CLI));
  afterAll(() => cli.killAll());
  return cli;
}
