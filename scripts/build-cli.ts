/**
 * Builds the CLI (cli/src, TypeScript) into the one file package.json's `bin` names. Run by
 * `npm ci` and `npm install` (the `prepare` script), so a fresh clone has it; the file is not
 * committed (.gitignore). Its dependencies (commander, nanospinner) stay imports, resolved from
 * node_modules as for any package, and the container fields come from docs/openapi.json.
 *   npm run prepare
 */
import { chmodSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { contractDefines } from '../lib/http/contract-defines.js';

const repositoryRoot = fileURLToPath(new URL('../', import.meta.url));

/** Where the built CLI goes, relative to the repository root (package.json `bin`). */
export const CLI_BIN = 'cli/dist/container-hosting.mjs';

export function buildCli(root: string = repositoryRoot): string {
  const outfile = join(root, CLI_BIN);
  buildSync({
    absWorkingDir: root,
    entryPoints: ['cli/src/main.ts'],
    outfile,
    bundle: true,
    // The dependencies load from node_modules; only the CLI's own code and the types it reads are bundled.
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
    define: contractDefines(root),
    legalComments: 'none',
    logLevel: 'warning',
  });
  chmodSync(outfile, 0o755);
  return outfile;
}

// Compared as paths: a URL percent-encodes spaces and non-ASCII characters that argv keeps as they are.
if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) buildCli();
