import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureKeyFile } from '../../../lib/local/refresh-grace-key-file.js';

describe('ensureKeyFile', () => {
  it('creates a 256-bit key only its owner may read, and keeps it across starts', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'grace-key-')), 'data', 'refresh-grace.key');

    const first = await ensureKeyFile(path);
    const again = await ensureKeyFile(path);

    expect(first.byteLength).toBe(32);
    expect(Buffer.from(again).equals(Buffer.from(first))).toBe(true);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await readFile(path, 'utf8')).trim()).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses a file that holds less than a key', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'grace-key-')), 'refresh-grace.key');
    await writeFile(path, 'abcd\n');

    await expect(ensureKeyFile(path)).rejects.toThrow(/must hold 32 bytes/);
  });
});
