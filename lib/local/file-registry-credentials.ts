import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { PullCredentials, RegistryCredentials, RegistryCredentialVault } from '../containers/registry-credentials.js';

/**
 * The local stack's registry credentials: a file per container, 0600 in a 0700 directory under
 * DATA_DIR, as the stack keeps its other secrets (its refresh grace key, its DynamoDB Local files),
 * and never in the table. A container id is a UUID, so it names a file and nothing else.
 */
export class FileRegistryCredentialVault implements RegistryCredentialVault {
  constructor(private readonly dir: string) {}

  async save(containerId: string, credentials: RegistryCredentials): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const path = this.pathOf(containerId);
    // Written aside and renamed over, so that a reader sees the old credentials or the new, never half.
    const partial = `${path}.${process.pid}.partial`;
    await writeFile(partial, JSON.stringify({ username: credentials.username, password: credentials.password }), { mode: 0o600 });
    await rename(partial, path);
  }

  async pullCredentialsFor(containerId: string): Promise<PullCredentials | undefined> {
    let text: string;
    try {
      text = await readFile(this.pathOf(containerId), 'utf8');
    } catch (error) {
      if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return undefined;
      throw error;
    }
    const { username, password } = JSON.parse(text) as RegistryCredentials;
    return { kind: 'inline', username, password };
  }

  async discard(containerId: string): Promise<void> {
    await rm(this.pathOf(containerId), { force: true });
  }

  private pathOf(containerId: string): string {
    if (!/^[A-Za-z0-9-]+$/.test(containerId)) throw new Error('A container id names no credentials file');
    return join(this.dir, `${containerId}.json`);
  }
}
