import { gzipSync } from 'node:zlib';
import { BUNDLE_BUDGET_BYTES, BUNDLE_BUDGET_EXCEPTIONS, bundleBudgetOf, bundleHandlers } from '../infra/bundling.js';
import { eventFunctions, routingFunctions } from '../infra/event-functions.js';
import { repositoryRoot } from '../infra/paths.js';
import { routes } from '../lib/http/routes.js';

/**
 * Bundles every function exactly as the stack deploys it (infra/bundling.ts) and prints the
 * size of each bundle; exits 1 when one is over budget, which keeps cold starts in check.
 */
const functions = [...routes, ...eventFunctions, ...routingFunctions].map(({ id, handler }) => ({ id, handler }));
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
  console.log(
    line(
      row.id,
      kib(row.minified),
      kib(row.gzip),
      row.minified > bundleBudgetOf(row.id)
        ? 'OVER BUDGET'
        : BUNDLE_BUDGET_EXCEPTIONS[row.id]
          ? `ceiling ${kib(bundleBudgetOf(row.id))}: ${BUNDLE_BUDGET_EXCEPTIONS[row.id]!.reason}`
          : '',
    ),
  );

const over = rows.filter((row) => row.minified > bundleBudgetOf(row.id));
const within = rows.filter((row) => row.minified <= BUNDLE_BUDGET_BYTES).length;
console.log(
  `\n${rows.length} functions; ${within} within the ${kib(BUNDLE_BUDGET_BYTES)} budget, ` +
    `${Object.keys(BUNDLE_BUDGET_EXCEPTIONS).length} with a ceiling of their own; ${over.length} over`,
);
if (over.length > 0) process.exitCode = 1;
