import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { environmentWith, repositoryRoot, spawnNpmStart, TEST_PROCESS_SETTINGS } from './npm-start.js';
import { pollUntil } from './poll.js';
import { freePort } from './free-port.js';

/**
 * README's "Your first container" as a newcomer runs it (issue 37): `npm start`'s own command on
 * a fresh DATA_DIR, then the README's marked blocks, read from the README and run by sh as
 * written. The one change: the README's port 3000 becomes a free one, so the run meets no other stack.
 */

/** The block under `<!-- first-steps: NAME -->` in README.md. */
export function readmeBlock(name: string): string {
  const readme = readFileSync(new URL('README.md', `file://${repositoryRoot}`), 'utf8');
  const found = new RegExp(`<!-- first-steps: ${name} -->\\n\`\`\`sh\\n([\\s\\S]*?)\`\`\``).exec(readme);
  if (!found) throw new Error(`README.md has no first-steps block ${name}`);
  return found[1]!;
}

/** The README's `npm start` line's environment, on its own port and data directory. */
export function readmeStartEnvironment(): Record<string, string> {
  const line = /^(\w+)='([^']*)' npm start$/m.exec(readmeBlockBefore('first-steps: sign-in'));
  if (!line) throw new Error("README.md's first steps start with no VAR='…' npm start line");
  return { [line[1]!]: line[2]! };
}

function readmeBlockBefore(marker: string): string {
  const readme = readFileSync(new URL('README.md', `file://${repositoryRoot}`), 'utf8');
  return readme.slice(readme.lastIndexOf('### Your first container', readme.indexOf(marker)), readme.indexOf(marker));
}

export interface RunningStack {
  child: ChildProcess;
  output: { text: string };
  port: number;
  stop(): Promise<void>;
}

/** `npm start`'s command, with no test table or credentials leaking in from the test's own environment. */
export async function startLikeNewcomer(env: Record<string, string>): Promise<RunningStack> {
  const port = await freePort();
  const { child, output } = spawnNpmStart(
    environmentWith({ ...readmeStartEnvironment(), PORT: String(port), ...env }, [...TEST_PROCESS_SETTINGS, 'ADMIN_EMAIL']),
  );
  await pollUntil(
    async () => output.text,
    (text) => text.includes('listening on') || child.exitCode !== null,
    120_000,
  );
  if (child.exitCode !== null) throw new Error(`npm start exited: ${output.text}`);
  return {
    child,
    output,
    port,
    async stop() {
      if (child.exitCode !== null) return;
      process.kill(-child.pid!, 'SIGINT');
      await Promise.race([once(child, 'exit'), new Promise((resolve) => setTimeout(resolve, 30_000))]);
      if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
    },
  };
}

/** README blocks run one after another in one sh, as one terminal would, on the stack's port. */
export function runReadmeBlocks(
  names: string[],
  port: number,
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const script = names.map(readmeBlock).join('\n').replaceAll(':3000', `:${port}`);
  const child = spawn('sh', ['-e', '-c', script], {
    cwd: repositoryRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}
