import { execFile } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliOn } from '../support/cli-process.js';
import { useSignedInStack } from '../support/local-stack.js';
import { pollUntil } from '../support/poll.js';

/**
 * `container-hosting volumes …` spawned as a person runs it against the local stack (process
 * runtime, directory volumes), with a personal access token: a volume made, mounted by a
 * container that writes to it, refused deletion while mounted, snapshotted, downloaded and
 * restored into a new volume (issue 34, item 9).
 */

const execFileAsync = promisify(execFile);

const stack = useSignedInStack();
const cli = cliOn(stack);
let workDir: string;

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'cli-volumes-'));
});

afterAll(async () => {
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

/** Writes data/hello.txt (the mount at /data is `data` in a process's working directory), then answers on its PORT. */
const WRITER =
  "require('node:fs').writeFileSync('data/hello.txt', 'kept ' + process.env.WORD); " +
  "require('node:http').createServer((request, response) => response.end('ok')).listen(Number(process.env.PORT));";

describe('container-hosting volumes against the local stack', () => {
  it('creates, lists, shows the container that mounts it, refuses rm while mounted, snapshots, downloads, restores and deletes', async () => {
    const name = `notes-${process.pid}`;

    const created = await cli.run(['volumes', 'create', name, '--size', '2']);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(new RegExp(`^name +${name}$`, 'm'));
    expect(created.stdout).toMatch(/^size +2 GB$/m);
    expect(created.stdout).toMatch(/^attached to +-$/m);
    const volumeId = /^id +(\S+)$/m.exec(created.stdout)![1]!;

    const badSize = await cli.run(['volumes', 'create', 'other', '--size', 'lots']);
    expect(badSize.code).toBe(2);
    expect(badSize.stderr).toContain('--size must be a whole number of GB, got "lots"');
    const tooLarge = await cli.run(['volumes', 'create', 'other', '--size', '5000', '--json']);
    expect(tooLarge.code).toBe(1);
    expect(JSON.parse(tooLarge.stderr).error).toMatchObject({ code: 'BAD_REQUEST', details: [{ field: 'size_gb' }] });

    const hostname = `writer-${process.pid}`;
    const container = await stack.api('POST', '/api/v1/containers', {
      hostname,
      port: 3000,
      env: { WORD: 'safe' },
      mounts: [{ volume: volumeId, path: '/data' }],
      command: [process.execPath, '-e', WRITER],
    });
    expect(container.status).toBe(200);
    const containerId = container.body.data.id as string;
    await pollUntil(
      () => stack.api('GET', `/api/v1/containers/${containerId}`),
      (response) => response.body.data.state === 'running',
      20_000,
    );

    const listed = await cli.run(['volumes', 'ls']);
    expect(listed.code).toBe(0);
    expect(listed.stdout.split('\n')[0]).toMatch(/^NAME +SIZE_GB +USED_GB +ATTACHED_TO +ID$/);
    expect(listed.stdout).toMatch(new RegExp(`^${name} +2 +[0-9.]+ +${hostname} +${volumeId}$`, 'm'));
    const shown = await cli.run(['volumes', 'get', name, '--json']);
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: volumeId, name, size_gb: 2, attached_to: containerId });

    const unconfirmed = await cli.run(['volumes', 'rm', name]);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain('pass --yes to confirm');
    const refused = await cli.run(['volumes', 'rm', name, '--yes']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `error: The volume is mounted by container ${containerId}; remove it from that container's mounts (or delete the container) first (CONFLICT)\n`,
    );

    const snapshot = await cli.run(['volumes', 'snapshot', name, '--json']);
    expect(snapshot.code).toBe(0);
    const taken = JSON.parse(snapshot.stdout);
    // Taken while the container runs: the copy may mix moments, and says so.
    expect(taken).toMatchObject({ volume_id: volumeId, state: 'ready', consistent: false });
    expect(taken.size_bytes).toBeGreaterThan(0);

    const snapshots = await cli.run(['volumes', 'snapshots', volumeId]);
    expect(snapshots.code).toBe(0);
    expect(snapshots.stdout).toMatch(new RegExp(`^${taken.id} +ready +${taken.size_bytes} +false +`, 'm'));

    const file = join(workDir, 'notes.tar.gz');
    const downloaded = await cli.run(['volumes', 'download', taken.id, '-o', file]);
    expect(downloaded.stderr).toBe('');
    expect(downloaded.code).toBe(0);
    expect(downloaded.stdout).toBe(`Saved ${(await stat(file)).size} bytes to ${file}\n`);
    const { stdout: content } = await execFileAsync('tar', ['-xzOf', file, './hello.txt']);
    expect(content).toBe('kept safe');

    const restored = await cli.run(['volumes', 'restore', taken.id, '--name', `${name}-copy`, '--json']);
    expect(restored.code).toBe(0);
    // As large as the snapshot's volume, with its content.
    expect(JSON.parse(restored.stdout)).toMatchObject({ name: `${name}-copy`, size_gb: 2, attached_to: null, from_snapshot: taken.id });

    expect((await stack.api('DELETE', `/api/v1/containers/${containerId}`)).status).toBe(200);
    const deleted = await cli.run(['volumes', 'rm', name, '--yes']);
    expect(deleted).toMatchObject({ code: 0, stdout: `Deleted volume ${name}\n` });
    const after = JSON.parse((await cli.run(['volumes', 'ls', '--json'])).stdout) as Array<{ name: string }>;
    expect(after.map((volume) => volume.name)).toEqual([`${name}-copy`]);
  });

  it('names a missing volume plainly and exits 1', async () => {
    const missing = await cli.run(['volumes', 'get', 'no-such-volume']);
    expect(missing).toMatchObject({ code: 1, stderr: 'error: No volume named no-such-volume (NOT_FOUND)\n' });
  });
});
