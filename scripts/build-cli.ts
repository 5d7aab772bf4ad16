/**
 * Builds the CLI (cli/src, TypeScript) into the one file package.json's `bin` names. Run by
 * `npm ci` and `npm install` (the `prepare` script), so a fresh clone has it; the file is not
 * committed (.gitignore). The container fields come from docs/openapi.json.
 *
 * Its dependencies (commander, tar-stream, @balena/dockerignore, nanospinner) are bundled in
 * too, with their licences beside it (THIRD_PARTY_NOTICES): loaded from node_modules, Node's
 * module loader resolved and read each of their files (tar-stream alone is seven packages) in a
 * process that lives under a second, and `deploy` sent its first request and its POST 8 to 13
 * ms later (docs/measurements.md, "The CLI's dependencies, bundled").
 *   npm run prepare
 */
import { chmodSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync, type Metafile } from 'esbuild';
import { contractDefines } from '../lib/http/contract-defines.js';

const repositoryRoot = fileURLToPath(new URL('../', import.meta.url));

/** Where the built CLI goes, relative to the repository root (package.json `bin`). */
export const CLI_BIN = 'cli/dist/container-hosting.mjs';
/** The licences of the packages bundled into it, beside it. */
export const CLI_NOTICES = 'cli/dist/THIRD_PARTY_NOTICES';

export function buildCli(root: string = repositoryRoot): string {
  const outfile = join(root, CLI_BIN);
  // Written under a name of this process and renamed: test files build the CLI in parallel, and a process that
  // starts it meanwhile must never read a half-written file.
  const partial = `${outfile}.${process.pid}`;
  const { metafile } = buildSync({
    absWorkingDir: root,
    entryPoints: ['cli/src/main.ts'],
    outfile: partial,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // commander is CommonJS: its require() of Node's own modules needs a require in an ES module.
    banner: {
      js: [
        '#!/usr/bin/env node',
        `// Bundled with its dependencies; their licences: ${CLI_NOTICES.split('/').pop()}, beside this file.`,
        "import { createRequire as createRequireForBundledPackages } from 'node:module';",
        'const require = createRequireForBundledPackages(import.meta.url);',
      ].join('\n'),
    },
    // Its version from package.json: the built file runs without npm, so no npm_package_version is set.
    define: { ...contractDefines(root), CLI_PACKAGE_VERSION: JSON.stringify(packageVersion(root)) },
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });
  const noticesFile = join(root, CLI_NOTICES);
  writeFileSync(`${noticesFile}.${process.pid}`, noticesOf(root, metafile));
  renameSync(`${noticesFile}.${process.pid}`, noticesFile);
  chmodSync(partial, 0o755);
  renameSync(partial, outfile);
  return outfile;
}

const packageVersion = (root: string): string =>
  (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;

/** Each bundled package's name, version and licence text, from its own package.json and LICENSE file. */
function noticesOf(root: string, metafile: Metafile): string {
  const packageDirs = new Set<string>();
  for (const input of Object.keys(metafile.inputs)) {
    const parts = input.split(/[\\/]/);
    const at = parts.lastIndexOf('node_modules');
    if (at < 0) continue;
    const scoped = parts[at + 1]!.startsWith('@');
    packageDirs.add(join(root, ...parts.slice(0, at + (scoped ? 3 : 2))));
  }
  return [...packageDirs]
    .sort()
    .map((dir) => {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; version: string; license?: string };
      const licenceFile = readdirSync(dir).find((name) => /^(licen[cs]e|copying)(\.|$)/i.test(name));
      const text = licenceFile ? readFileSync(join(dir, licenceFile), 'utf8').trim() : `Licence: ${manifest.license ?? 'not stated'}`;
      return `${manifest.name} ${manifest.version} (${manifest.license ?? 'licence not stated'})\n\n${text}\n`;
    })
    .join(`\n${'-'.repeat(72)}\n\n`);
}

// Compared as paths: a URL percent-encodes spaces and non-ASCII characters that argv keeps as they are.
if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) buildCli();
