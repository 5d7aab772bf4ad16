import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { identityService } from '../../lib/wiring/identity.js';

const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));
const tsxCli = fileURLToPath(new URL('../../node_modules/tsx/dist/cli.mjs', import.meta.url));

/**
 * `npm run admin -- …` without npm in between, as an operator runs it against `npm start`:
 * DYNAMODB_ENDPOINT and TABLE_NAME (this file's table on DynamoDB Local, from setup-env) and
 * no AWS credentials at all.
 */
function runAdmin(
  args: string[],
  options: { stdin?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...options.env };
  for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE', 'LOG_LEVEL']) delete env[name];
  const child = spawn(process.execPath, [tsxCli, 'scripts/admin.ts', ...args], { cwd: repositoryRoot, env, stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdin.end(options.stdin ?? '');
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

describe('npm run admin against DynamoDB Local', () => {
  it('creates a user who can then sign in, with no AWS credentials in the environment', async () => {
    const email = `ops-${randomUUID()}@example.com`;
    const password = `pw-${randomUUID()}`;

    const result = await runAdmin(['create-user', '--email', email, '--role', 'admin', '--password-stdin'], { stdin: `${password}\n` });

    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^Created admin ${email} \\([0-9a-f-]{36}\\)\\n$`));
    const session = await identityService.signIn(email, password, '127.0.0.1');
    expect(session).toMatchObject({ token: expect.stringMatching(/^svss_/), user: { email, role: 'admin' } });
  });

  it('fails with one clear line and a non-zero exit when DynamoDB cannot be reached', async () => {
    const result = await runAdmin(['create-user', '--email', `ops-${randomUUID()}@example.com`], {
      env: { DYNAMODB_ENDPOINT: 'http://127.0.0.1:9' },
    });

    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('admin: Cannot reach DynamoDB at http://127.0.0.1:9 (ECONNREFUSED); is npm start running?\n');
  });

  it('names the table when it does not exist', async () => {
    // A data directory with npm start's key file: the table, not the directory, is what is missing.
    const dataDir = await mkdtemp(join(tmpdir(), 'admin-data-'));
    await mkdir(join(dataDir, 'dynamodb'));
    await writeFile(join(dataDir, 'dynamodb', 'access-key'), 'local\n');
    const result = await runAdmin(['create-user', '--email', `ops-${randomUUID()}@example.com`], {
      env: { TABLE_NAME: 'no-such-table', DATA_DIR: dataDir },
    });

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^admin: Table no-such-table not found in DynamoDB at http:\/\/127\.0\.0\.1:\d+ \(check TABLE_NAME and DYNAMODB_ENDPOINT\)\n$/,
    );
  });

  it("names a data directory without npm start's key as the cause, not only the table (a custom DATA_DIR)", async () => {
    const result = await runAdmin(['list-users'], { env: { TABLE_NAME: 'no-such-table', DATA_DIR: '/nonexistent/data-dir' } });

    expect(result.code).toBe(1);
    expect(result.stderr.split('\n')).toHaveLength(2);
    expect(result.stderr).toContain('there is no /nonexistent/data-dir/dynamodb/access-key');
    expect(result.stderr).toContain('run this with the same DATA_DIR');
  });
});

describe('npm run admin on existing accounts', () => {
  it('lists users, resets a password the next sign-in must replace, disables and enables an account', async () => {
    // Prepare
    const email = `person-${randomUUID()}@example.com`;
    const password = `pw-${randomUUID()}`;
    await identityService.createUser({ email, password });
    const session = await identityService.signIn(email, password, '127.0.0.1');

    // Act and assess: reset.
    const reset = await runAdmin(['reset-password', '--email', email]);
    expect(reset.stderr).toBe('');
    expect(reset.code).toBe(0);
    const temporary = /One-time password \(shown once\): (\S+)/.exec(reset.stdout)?.[1];
    expect(temporary).toBeDefined();
    expect(await identityService.authenticate(session.token)).toBeUndefined();
    await expect(identityService.signIn(email, temporary!, '127.0.0.1')).rejects.toMatchObject({ code: 'PASSWORD_CHANGE_REQUIRED' });
    const chosen = `chosen-${randomUUID()}`;
    const afterReset = await identityService.signIn(email, temporary!, '127.0.0.1', undefined, chosen);

    // Disable, shown in the list, then enable.
    const disabled = await runAdmin(['disable', '--email', email]);
    expect(disabled.code).toBe(0);
    expect(await identityService.authenticate(afterReset.token)).toBeUndefined();
    await expect(identityService.signIn(email, chosen, '127.0.0.1')).rejects.toMatchObject({ code: 'ACCOUNT_DISABLED' });
    const listed = await runAdmin(['list-users']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${email}\tuser\t[0-9a-f-]{36}\tdisabled$`, 'm'));
    const enabled = await runAdmin(['enable', '--email', email]);
    expect(enabled.code).toBe(0);
    expect((await identityService.signIn(email, chosen, '127.0.0.1')).user.email).toBe(email);
  });

  it('says so when no user has the email, exit 1', async () => {
    const result = await runAdmin(['disable', '--email', `ghost-${randomUUID()}@example.com`]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^No user with email ghost-/);
  });
});
