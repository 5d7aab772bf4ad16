import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { buildConsoleAssets, type ConsoleAssets } from '../lib/console/build-console.js';
import { BUNDLE_BUDGET_BYTES, BUNDLE_BUDGET_EXCEPTIONS, bundleBudgetOf, bundleHandlers } from '../infra/bundling.js';
import { eventFunctions, routingFunctions } from '../infra/event-functions.js';
import { repositoryRoot } from '../infra/paths.js';
import { routes } from '../lib/http/routes.js';
import { withBlocks } from './doc-blocks.js';

/**
 * Bundles every function exactly as the stack deploys it (infra/bundling.ts) and prints the
 * size of each bundle; exits 1 when one is over budget, which keeps cold starts in check.
 * `-- --write` also writes the docs' blocks: the ceilings as infra/bundling.ts declares them
 * (docs/architecture.md, checked by test/unit/docs-figures.test.ts) and the sizes measured now,
 * the functions' and the console's files', with the date (docs/measurements.md).
 */
export const SCRIPT = 'npm run bundle-sizes -- --write';

const functions = [...routes, ...eventFunctions, ...routingFunctions].map(({ id, handler }) => ({ id, handler }));

const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB`;

/** docs/architecture.md's block: the budget, and each function with a ceiling of its own (reasons: infra/bundling.ts). */
export function bundleBudgetsBlock(): string {
  const exceptions = Object.entries(BUNDLE_BUDGET_EXCEPTIONS);
  return [
    `${functions.length} functions, each one minified ESM bundle with the AWS SDK inside; a test holds each to`,
    `${kib(BUNDLE_BUDGET_BYTES)} but ${exceptions.length} with a ceiling of their own, each with its reason in \`BUNDLE_BUDGET_EXCEPTIONS\``,
    '(infra/bundling.ts):',
    '',
    '| function | ceiling |',
    '|---|---|',
    ...exceptions.map(([id, { bytes }]) => `| \`${id}\` | ${kib(bytes)} |`),
  ].join('\n');
}

interface BundleSize {
  id: string;
  minified: number;
  gzip: number;
}

/** docs/measurements.md's block: what the bundles weighed on the day the script ran. */
export function bundleSizesBlock(rows: readonly BundleSize[], day: string): string {
  const sorted = [...rows].sort((a, b) => a.minified - b.minified);
  const within = rows.filter((row) => row.minified <= BUNDLE_BUDGET_BYTES).length;
  return [
    `*${day}, \`${SCRIPT}\`.* ${rows.length} bundles from ${kib(sorted[0]!.minified)} (\`${sorted[0]!.id}\`) to`,
    `${kib(sorted.at(-1)!.minified)} (\`${sorted.at(-1)!.id}\`) minified, ${kib(Math.min(...rows.map((row) => row.gzip)))} to ${kib(Math.max(...rows.map((row) => row.gzip)))} gzipped;`,
    `${within} within the ${kib(BUNDLE_BUDGET_BYTES)} budget. The ten largest:`,
    '',
    '| function | minified | gzipped | ceiling |',
    '|---|---|---|---|',
    ...sorted
      .slice(-10)
      .reverse()
      .map((row) => `| \`${row.id}\` | ${kib(row.minified)} | ${kib(row.gzip)} | ${kib(bundleBudgetOf(row.id))} |`),
  ].join('\n');
}

/** A console module and every module it imports statically, as the browser loads them before it runs. */
function staticClosure(files: ConsoleAssets['files'], entry: string): string[] {
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    for (const match of files[name]!.body.matchAll(/(?:import|export)\s*(?:[\w*{}\s,$]*from\s*)?["']\.\/([\w.-]+\.js)["']/g))
      visit(match[1]!);
  };
  visit(entry);
  return [...seen];
}

/** docs/measurements.md's block on the console: what its first page, the container page's chunk and the stylesheet weigh. */
export function consoleSizesBlock(assets: ConsoleAssets, day: string): string {
  const size = (names: readonly string[]) => {
    const bodies = names.map((name) => assets.files[name]!.body);
    return `${kib(bodies.reduce((total, body) => total + Buffer.byteLength(body), 0))} (${kib(bodies.reduce((total, body) => total + gzipSync(body, { level: 9 }).length, 0))} gzipped)`;
  };
  const firstPage = staticClosure(assets.files, assets.script);
  const containerPage = Object.keys(assets.files).find((name) => name.startsWith('container-page-'))!;
  const containerChunk = staticClosure(assets.files, containerPage).filter((name) => !firstPage.includes(name));
  return [
    `*${day}, \`${SCRIPT}\`.* The containers, tokens and applications pages load ${size(firstPage)} of JavaScript`,
    `(test/unit/console/build-console.test.ts holds the first page to 80 KiB gzipped); a container page adds its chunk`,
    `with uPlot, ${size(containerChunk)}; the stylesheet is ${size([assets.stylesheet])}.`,
  ].join('\n');
}

function measure(): BundleSize[] {
  const bundles = bundleHandlers(
    repositoryRoot,
    functions.map((fn) => fn.handler),
  );
  return functions.map(({ id, handler }) => {
    const code = bundles.get(handler)?.find((file) => file.name === 'index.mjs')?.contents;
    if (!code) throw new Error(`No bundle for ${handler}`);
    return { id, minified: code.byteLength, gzip: gzipSync(code).byteLength };
  });
}

function writeBlock(path: string, blocks: Record<string, string>): void {
  const file = join(repositoryRoot, path);
  writeFileSync(file, withBlocks(readFileSync(file, 'utf8'), blocks, SCRIPT));
  console.log(`${path} updated`);
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const rows = measure();
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
  if (process.argv.includes('--write')) {
    writeBlock('docs/architecture.md', { 'bundle-budgets': bundleBudgetsBlock() });
    const day = new Date().toISOString().slice(0, 10);
    writeBlock('docs/measurements.md', {
      'bundle-sizes': bundleSizesBlock(rows, day),
      'console-sizes': consoleSizesBlock(buildConsoleAssets(), day),
    });
  }
  if (over.length > 0) process.exitCode = 1;
}
