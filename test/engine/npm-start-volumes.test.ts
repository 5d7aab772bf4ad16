import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { engineClient } from '../../lib/local/docker-engine.js';
import { VOLUME_LABEL } from '../../lib/local/docker-volumes.js';
import { call } from '../support/api-client.js';
import { appRequest } from '../support/app-request.js';
import { TEST_IMAGE } from '../support/global-engine.js';
import { pollUntil } from '../support/poll.js';

/*
 * `npm start` killed with SIGKILL while a container with a volume runs, then started again
 * (issue 34, items 4 and 8): the container comes back running, on the same engine volume, with
 * what the app wrote before the kill.
 */
const dockerHost = inject('dockerHost');
const engine = engineClient(dockerHost);
const repositoryRoot = new URL('../../', import.meta.url).pathname;
const ADMIN_PASSWORD = `pw-${randomUUID()}`;
const dataDir = await mkdtemp(join(tmpdir(), 'npm-start-volumes-'));
const tableName = `test-${randomUUID()}`;
const running: ChildProcess[] = [];

afterAll(async () => {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
  const { stackIdOf } = await import('../../lib/wiring/local-containers.js');
  const volumes = await engine.listVolumes({
    filters: { label: [`${VOLUME_LABEL.stack}=${stackIdOf(process.env.LOCAL_CONTAINER_DIR!)}`] },
  });
  for (const volume of volumes.Volumes ?? []) {
    await engine
      .getVolume(volume.Name)
      .remove({ force: true })
      .catch(() => undefined);
  }
  await rm(dataDir, { recursive: true, force: true });
});

async function startStack(): Promise<{ child: ChildProcess; baseUrl: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/local.ts'], {
    cwd: repositoryRoot,
    env: {
      ...process.env,
      PORT: '0',
      DATA_DIR: dataDir,
      // The file's own container directory, so the setup's clean-up finds what this stack leaves.
      LOCAL_CONTAINER_DIR: process.env.LOCAL_CONTAINER_DIR,
      TABLE_NAME: tableName,
      ADMIN_PASSWORD,
      CONTAINER_RUNTIME: 'docker',
      DOCKER_HOST: dockerHost,
      LOG_LEVEL: 'silent',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  running.push(child);
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const listening = await pollUntil(
    async () => /listening on (http:\/\/\S+)/.exec(text),
    (match) => match !== null || child.exitCode !== null,
    60_000,
  );
  if (!listening) throw new Error(`The stack did not start:\n${text}`);
  return { child, baseUrl: listening[1]! };
}

async function signIn(baseUrl: string): Promise<{ token: string; headers: Record<string, string> }> {
  const session = await call(baseUrl, 'POST', '/api/v1/sessions', { body: { email: 'admin@example.com', password: ADMIN_PASSWORD } });
  return { token: session.body.data.token, headers: { 'x-csrf-token': session.body.data.csrf_token } };
}

// The header lines end in CRLF: Node's HTTP parser (the proxy's upstream) refuses bare LF.
const cgi = (name: string, body: string) =>
  `printf '#!/bin/sh\\nprintf "Content-Type: text/plain\\\\r\\\\n\\\\r\\\\n"\\n${body}\\n' > /tmp/www/cgi-bin/${name}`;
/** busybox httpd over /data: `write?text` appends a line to notes, `read` answers them. */
const APP = [
  'sh',
  '-c',
  [
    'mkdir -p /tmp/www/cgi-bin',
    cgi('write', 'echo "$QUERY_STRING" >> /data/notes; echo ok'),
    cgi('read', 'cat /data/notes'),
    'chmod +x /tmp/www/cgi-bin/*',
    "trap 'exit 0' TERM",
    'httpd -f -p $PORT -h /tmp/www & wait',
  ].join('; '),
];

describe('npm start with a volume', () => {
  it('after kill -9 and a start, runs the container again with what its app wrote on the volume', async () => {
    const first = await startStack();
    const auth = await signIn(first.baseUrl);
    const volume = await call(first.baseUrl, 'POST', '/api/v1/volumes', { ...auth, body: { name: 'kept', size_gb: 1 } });
    expect(volume.status, volume.text).toBe(201);
    const created = await call(first.baseUrl, 'POST', '/api/v1/containers', {
      ...auth,
      body: {
        hostname: `killed-${process.pid}`,
        image: TEST_IMAGE,
        port: 8080,
        command: APP,
        mounts: [{ volume: volume.body.data.id, path: '/data' }],
      },
    });
    expect(created.status, created.text).toBe(200);
    const id = created.body.data.id;
    const before = await pollUntil(
      () => call(first.baseUrl, 'GET', `/api/v1/containers/${id}`, auth),
      (response) => response.body.data?.state === 'running',
      30_000,
    );
    expect((await appRequest(`${before.body.data.url}cgi-bin/write?before-kill`)).text).toBe('ok\n');

    const exited = once(first.child, 'exit');
    process.kill(-first.child.pid!, 'SIGKILL');
    await exited;

    const second = await startStack();
    const secondAuth = await signIn(second.baseUrl);
    const resumed = await pollUntil(
      () => call(second.baseUrl, 'GET', `/api/v1/containers/${id}`, secondAuth),
      (response) => response.body.data?.state === 'running',
      60_000,
    );
    expect(resumed.body.data).toMatchObject({ state: 'running', mounts: [{ volume: volume.body.data.id, path: '/data' }] });
    expect((await appRequest(`${resumed.body.data.url}cgi-bin/read`)).text).toBe('before-kill\n');
    expect((await call(second.baseUrl, 'GET', `/api/v1/volumes/${volume.body.data.id}`, secondAuth)).body.data).toMatchObject({
      attached_to: id,
    });

    const gone = once(second.child, 'exit');
    process.kill(-second.child.pid!, 'SIGTERM');
    await gone;
  }, 240_000);
});
