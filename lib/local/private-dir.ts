import { chmod, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Makes a directory of the local stack's data private to this OS user, creating it if need be:
 * the directory 0700 and every file directly in it 0600, fixing what an earlier version left
 * readable (the database files are named after the stack's access key).
 */
export async function makePrivate(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isFile()) await chmod(join(dir, entry.name), 0o600);
  }
}
