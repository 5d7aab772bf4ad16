import { buildSync } from 'esbuild';
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { contractDefines } from '../http/contract-defines.js';

/** One file the console's pages load, served under `/console/assets/<name>`. */
export interface ConsoleAsset {
  contentType: string;
  body: string;
}

/** The built console: its hashed files and the two the page shell names. */
export interface ConsoleAssets {
  /** The entry script's file name (`main-<hash>.js`). */
  script: string;
  /** The stylesheet's file name (`console-<hash>.css`). */
  stylesheet: string;
  files: Record<string, ConsoleAsset>;
}

const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));
const CONTENT_TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

/**
 * Bundles the browser code under web/console with the project's esbuild, in memory: minified
 * ES modules, the container page (and uPlot with it) split into a chunk of its own so the first
 * page loads only what it shows, each file named by its content's hash so it can be cached for a year.
 * The container forms get their fields from the OpenAPI document (lib/http/contract-defines.ts).
 */
export function buildConsoleAssets(root: string = repositoryRoot): ConsoleAssets {
  const outdir = join(root, '.console-build', 'assets');
  const result = buildSync({
    absWorkingDir: root,
    entryPoints: [join(root, 'web/console/main.ts'), join(root, 'web/console/console.css')],
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2020',
    minify: true,
    entryNames: '[name]-[hash]',
    chunkNames: '[name]-[hash]',
    outdir,
    write: false,
    legalComments: 'none',
    logLevel: 'silent',
    define: contractDefines(root),
  });
  const files: Record<string, ConsoleAsset> = {};
  for (const file of result.outputFiles) {
    const name = basename(file.path);
    const extension = name.slice(name.lastIndexOf('.'));
    const contentType = CONTENT_TYPES[extension];
    if (contentType) files[name] = { contentType, body: file.text };
  }
  const named = (pattern: RegExp): string => {
    const name = Object.keys(files).find((candidate) => pattern.test(candidate));
    if (!name) throw new Error(`The console build produced no file matching ${pattern}`);
    return name;
  };
  return { script: named(/^main-[\w-]+\.js$/), stylesheet: named(/^console-[\w-]+\.css$/), files };
}

/** Where the Lambda bundles find the built console (package.json `imports`, condition `lambda`). */
export const CONSOLE_ASSETS_MODULE = '.console-build/console-assets.mjs';

/** The built console as an ES module exporting `consoleAssets`, for bundling into the console's function. */
export function consoleAssetsModuleSource(assets: ConsoleAssets): string {
  return `export const consoleAssets = ${JSON.stringify(assets)};\n`;
}

/**
 * Builds the console and writes CONSOLE_ASSETS_MODULE under `root`: the CDK bundling
 * (infra/bundling.ts) calls it before bundling the functions, so a fresh clone needs no extra step.
 */
export function writeConsoleAssetsModule(root: string = repositoryRoot): void {
  const target = join(root, CONSOLE_ASSETS_MODULE);
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, consoleAssetsModuleSource(buildConsoleAssets(root)));
}
