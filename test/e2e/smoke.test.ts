import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { containerStore } from '../../lib/wiring/containers.js';
import { call, personalAccessToken, signedInUser, type SignedInUser } from '../support/api-client.js';
import { useStack } from '../support/local-stack.js';

const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));
const tsxCli = fileURLToPath(new URL('../../node_modules/tsx/dist/cli.mjs', import.meta.url));

/**
 * `npm run smoke -- --base-url URL --token PAT` (scripts/smoke.ts), without npm in between,
 * against the local stack served from this process: the same script an operator runs against
 * a deployment.
 */
function runSmoke(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [tsxCli, 'scripts/smoke.ts', ...args], {
    cwd: repositoryRoot,
    env: { PATH: process.env.PATH, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...env },
    stdio: 'pipe',
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

const stack = useStack();
let user: SignedInUser;
let token: string;

beforeAll(async () => {
  user = await signedInUser(stack.baseUrl);
  token = await personalAccessToken(stack.baseUrl, user);
});

describe('npm run smoke against the local stack', () => {
  it('passes every journey, prints no secret, and leaves nothing behind', async () => {
    const result = await runSmoke(['--base-url', stack.baseUrl, '--token', token]);

    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines.filter((line) => line.startsWith('ok '))).toHaveLength(10);
    expect(lines.at(-1)).toBe('10 passed, 0 failed');
    expect(result.stdout).not.toContain(token);
    expect(result.stdout).not.toMatch(/svcs_/);
    // Cleaned up: no container and no application of the user remain, and the quota is back to nothing.
    expect((await call(stack.baseUrl, 'GET', '/api/v1/containers', { token })).body.data).toEqual([]);
    expect((await call(stack.baseUrl, 'GET', '/api/v1/oauth/apps', { token })).body.data).toEqual([]);
    expect(await containerStore.usageOf(user.userId)).toEqual({ containers: 0, runningCpu: 0, runningMemoryMb: 0 });
  });

  it('takes the token from SMOKE_TOKEN too, and fails (exit 1) with a token the deployment does not know', async () => {
    const result = await runSmoke(['--base-url', stack.baseUrl], { SMOKE_TOKEN: 'svpat_not-a-real-token' });

    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^FAIL the token authenticates \(GET \/api\/v1\/users\/me\): expected 200, got HTTP 401 UNAUTHORIZED/m);
    expect(result.stdout).not.toContain('svpat_not-a-real-token');
  });

  it('answers a usage line and exit 2 without a base URL', async () => {
    const result = await runSmoke(['--token', token]);

    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/usage: npm run smoke -- --base-url URL/);
  });
});
