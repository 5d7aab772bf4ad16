import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: handler paths in the route table are relative to it. */
export const repositoryRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
