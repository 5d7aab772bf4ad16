import { gzipSync } from 'node:zlib';
import { BUNDLE_BUDGET_BYTES, bundleHandlers } from '../infra/bundling.js';
import { eventFunctions } from '../infra/event-functions.js';
import { repositoryRoot } from '../infra/paths.js';
import { routes } from '../lib/http/routes.js';

/**
 * Bundles every function exactly as the stack deploys it (infra/bundling.ts) and prints the
 * size of each bundle; exits 1 when one is over budget, which keeps cold starts in check.
 */
const functions = [...routes, ...eventFunctions].map(({ id, handler }) => ({ id, handler }));
const bundles = bundleHandlers(
  repositoryRoot,
  functions.map((fn) => fn.handler),
);

const rows = functions.map(({ id, handler }) => {
  const code = bundles.get(handler)?.find((file) => file.name === 'index.mjs')?.contents;
  if (!code) throw new Error(`No bundle for ${handler}`);
  return { id, minified: code.byteLength, gzip: gzipSync(code).byteLength };
});

const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB`;
const idWidth = Math.max('function'.length, ...rows.map((row) => row.id.length));
const line = (id: string, minified: string, gzip: string, note = ''): string =>
  `${id.padEnd(idWidth)}  ${minified.padStart(12)}  ${gzip.padStart(12)}  ${note}`.trimEnd();

console.log(line('function', 'minified', 'gzip'));
for (const row of rows)
  console.log(line(row.id, kib(row.minified), kib(row.gzip), row.minified > BUNDLE_BUDGET_BYTES ? 'OVER BUDGET' : ''));

const over = rows.filter((row) => row.minified > BUNDLE_BUDGET_BYTES);
console.log(`\n${rows.length} functions; budget ${kib(BUNDLE_BUDGET_BYTES)} minified per function; ${over.length} over budget`);
if (over.length > 0) process.exitCode = 1;
