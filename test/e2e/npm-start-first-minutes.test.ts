import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/api-client.js';
import { environmentWith, type SpawnedStack, spawnNpmStart } from '../support/npm-start.js';
import { pollUntil } from '../support/poll.js';

/**
 * The first minutes of `npm start` as a newcomer meets them (issue 37, item 1): the banner names
 * the console and its admin, the stack's root opens the console, `/favicon.ico` is an icon, the
 * log reads as lines with LOG_FORMAT=readable, and a busy port is refused before anything exists.
 */

const ADMIN_EMAIL = 'first-minutes@example.com';

/** Every stack this file started, its own process group, so none outlives a failing test. */
const groups: number[] = [];
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'first-minutes-'));
});

afterAll(async () => {
  for (const group of groups) {
    try {
      process.kill(-group, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  await rm(dataDir, { recursive: true, force: true });
});

/** `npm start`'s own command on a data directory of this file's, with this file's test table and directories left out. */
function startStack(env: Record<string, string>): SpawnedStack {
  const started = spawnNpmStart(environmentWith({ DATA_DIR: dataDir, ADMIN_EMAIL, CONTAINER_RUNTIME: 'process', ...env }));
  groups.push(started.child.pid!);
  return started;
}

async function listeningPort(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

describe('npm start, the first minutes', { timeout: 120_000 }, () => {
  it('refuses a busy port before it starts or creates anything, with a hint to set PORT', async () => {
    const { server, port } = await listeningPort();
    try {
      const { child, output } = startStack({ PORT: String(port) });
      const [code] = await once(child, 'exit');

      expect(code).toBe(1);
      expect(output.text).toContain(
        `Could not start the local stack: port ${port} on 127.0.0.1 is already in use (another stack, or another program); set PORT to a free one, e.g. PORT=${port + 1} npm start`,
      );
      expect(output.text).not.toMatch(/Admin|password|DynamoDB Local on/);
      expect(existsSync(join(dataDir, 'dynamodb'))).toBe(false);
    } finally {
      server.close();
    }
  });

  it('prints the console URL and the admin; / opens the console, /favicon.ico is an icon; LOG_FORMAT=readable logs lines', async () => {
    const { port } = await listeningPort().then(async ({ server, port: free }) => {
      await new Promise((closed) => server.close(closed));
      return { port: free };
    });
    const { child, output } = startStack({ PORT: String(port), LOG_FORMAT: 'readable' });
    const baseUrl = `http://127.0.0.1:${port}`;
    const banner = await pollUntil(
      async () => output.text,
      // The banner's lines may arrive in more than one read: wait for its last one.
      (text) => text.includes('Console: ') || child.exitCode !== null,
      90_000,
    );
    expect(banner).toContain(
      `Container hosting service listening on ${baseUrl}\nConsole: ${baseUrl}/console (sign in as ${ADMIN_EMAIL})\n`,
    );

    const root = await call(baseUrl, 'GET', '/');
    const icon = await fetch(`${baseUrl}/favicon.ico`);
    const iconBytes = Buffer.from(await icon.arrayBuffer());
    const consolePage = await call(baseUrl, 'GET', root.headers.get('location')!);

    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/console');
    // The console itself sends a browser without a session on to sign in.
    expect(consolePage.status).toBe(302);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/png');
    expect(iconBytes.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));

    const logged = await pollUntil(
      async () => output.text,
      (text) => /Request handled .*route=consoleHome/.test(text),
      10_000,
    );
    const line = logged.split('\n').find((text) => text.includes('route=consoleHome'))!;
    expect(line).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}Request handled /);
    expect(line).toContain('method=GET');
    expect(line).not.toContain('{');
    process.kill(-child.pid!, 'SIGINT');
    await once(child, 'exit');
  });
});
