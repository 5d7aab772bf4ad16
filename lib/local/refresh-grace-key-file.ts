import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

const KEY_BYTES = 32;

/**
 * The local stack's refresh grace key: 256 random bits in hex in a file only its owner may read
 * (0600), created on first start and kept across restarts, so a retry after a restart still
 * derives the pair its rotation handed out. Delete the file and restart to rotate it.
 */
export async function ensureKeyFile(path: string): Promise<Uint8Array> {
  await mkdir(dirname(path), { recursive: true });
  try {
    // `wx`: never overwrites, so two processes starting at once keep the first one's key.
    await writeFile(path, `${randomBytes(KEY_BYTES).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if (!(error instanceof Error && 'code' in error && error.code === 'EEXIST')) throw error;
  }
  const key = Buffer.from((await readFile(path, 'utf8')).trim(), 'hex');
  if (key.byteLength < KEY_BYTES) throw new Error(`${path} must hold ${KEY_BYTES} bytes in hex; delete it to have a new one made`);
  return key;
}
