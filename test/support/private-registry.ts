import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import { freePort } from './free-port.js';

const execFileAsync = promisify(execFile);

/** Debian's `docker-registry` package: the open-source registry (distribution), `apt-get install -y docker-registry`. */
export const REGISTRY_BINARY = '/usr/bin/docker-registry';

/** Where containers/image (Podman) looks for a registry's CA, per host:port (containers-certs.d(5)). */
const ENGINE_CERTS_DIR = '/etc/containers/certs.d';

export interface PrivateRegistry {
  /** `127.0.0.1:<port>` */
  host: string;
  username: string;
  password: string;
  close(): Promise<void>;
}

/**
 * The registry on loopback with htpasswd authentication, as an operator runs it: its htpasswd
 * wants bcrypt (distribution's htpasswd access controller reads nothing else), made here with
 * the system's crypt(3) through Perl (libxcrypt does `$2b$`), offline and with no apache2-utils.
 * The engine refuses plain HTTP, so the registry serves TLS with a certificate made for it, which
 * the engine trusts through certs.d for this host:port only.
 */
export async function startPrivateRegistry(): Promise<PrivateRegistry> {
  const dir = await mkdtemp(join(tmpdir(), 'private-registry-'));
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  const username = 'ci-robot';
  const password = randomBytes(12).toString('hex');
  await writeFile(join(dir, 'htpasswd'), `${username}:${await bcrypt(password)}\n`, { mode: 0o600 });
  await execFileAsync('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
    '-keyout',
    join(dir, 'key.pem'),
    '-out',
    join(dir, 'cert.pem'),
  ]);
  const certsDir = join(ENGINE_CERTS_DIR, host);
  await mkdir(certsDir, { recursive: true });
  await execFileAsync('cp', [join(dir, 'cert.pem'), join(certsDir, 'ca.crt')]);
  await writeFile(
    join(dir, 'config.yml'),
    [
      'version: 0.1',
      'log:',
      '  level: warn',
      'storage:',
      '  filesystem:',
      `    rootdirectory: ${join(dir, 'data')}`,
      'http:',
      `  addr: ${host}`,
      '  tls:',
      `    certificate: ${join(dir, 'cert.pem')}`,
      `    key: ${join(dir, 'key.pem')}`,
      'auth:',
      '  htpasswd:',
      '    realm: private-registry-test',
      `    path: ${join(dir, 'htpasswd')}`,
      '',
    ].join('\n'),
  );
  const registry: ChildProcess = spawn(REGISTRY_BINARY, ['serve', join(dir, 'config.yml')], { stdio: 'ignore' });
  await waitForPort(port);
  return {
    host,
    username,
    password,
    close: async () => {
      registry.kill('SIGTERM');
      await rm(certsDir, { recursive: true, force: true });
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export const registryInstalled = (): boolean => existsSync(REGISTRY_BINARY);

/** Pushes a local image to the registry under `repository:tag` through the engine's API, with the registry's credentials. */
export async function pushTo(engine: Docker, registry: PrivateRegistry, localImage: string, repository: string): Promise<string> {
  const target = `${registry.host}/${repository}`;
  await engine.getImage(localImage).tag({ repo: target, tag: '1' });
  const progress = (await engine
    .getImage(`${target}:1`)
    .push({ authconfig: { username: registry.username, password: registry.password, serveraddress: registry.host } })) as Readable;
  await new Promise<void>((resolve, reject) => {
    engine.modem.followProgress(progress, (error: Error | null, events: Array<{ error?: string }>) => {
      const failed = events?.find((event) => event.error);
      if (error || failed) reject(error ?? new Error(failed!.error));
      else resolve();
    });
  });
  // Gone from the engine, so that a run has to pull it.
  await engine.getImage(`${target}:1`).remove();
  return `${target}:1`;
}

async function bcrypt(password: string): Promise<string> {
  const alphabet = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const salt = Array.from(randomBytes(22), (byte) => alphabet[byte % 64]).join('');
  const { stdout } = await execFileAsync('perl', ['-e', 'print crypt($ARGV[0], $ARGV[1])', password, `$2b$05$${salt}`]);
  if (!stdout.startsWith('$2b$')) throw new Error('crypt(3) here makes no bcrypt hashes');
  return stdout;
}

async function waitForPort(port: number): Promise<void> {
  const { connect } = await import('node:net');
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => resolve(socket.destroy() === socket));
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`The registry did not listen on ${port}`);
}
