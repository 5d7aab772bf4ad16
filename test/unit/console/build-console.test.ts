import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { buildConsoleAssets } from '../../../lib/console/build-console.js';

const KIB = 1024;
const FIRST_PAGE_BUDGET_GZIPPED = 80 * KIB;

/** A module and every module it imports statically (`import … from "./x.js"`), as the browser loads them before it runs. */
function staticClosure(files: Record<string, { body: string }>, entry: string): string[] {
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

const gzipped = (text: string): number => gzipSync(text, { level: 9 }).length;

describe('buildConsoleAssets', () => {
  const assets = buildConsoleAssets();

  it('names every file by its content hash', () => {
    for (const name of Object.keys(assets.files)) expect(name).toMatch(/^[\w-]+-[A-Z0-9]{8}\.(js|css)$/);
    expect(assets.files[assets.script]?.contentType).toBe('text/javascript; charset=utf-8');
    expect(assets.files[assets.stylesheet]?.contentType).toBe('text/css; charset=utf-8');
  });

  it('keeps the first page within 80 KiB of gzipped JavaScript, with the chart library left to the container page', () => {
    const firstPage = staticClosure(assets.files, assets.script);
    const firstPageBytes = firstPage.reduce((total, name) => total + gzipped(assets.files[name]!.body), 0);
    const containerPage = Object.keys(assets.files).find((name) => name.startsWith('container-page-'));

    expect(firstPageBytes).toBeLessThanOrEqual(FIRST_PAGE_BUDGET_GZIPPED);
    expect(containerPage).toBeDefined();
    expect(firstPage).not.toContain(containerPage);
    // uPlot's own class names travel with it.
    expect(firstPage.some((name) => assets.files[name]!.body.includes('u-legend'))).toBe(false);
    expect(assets.files[containerPage!]!.body).toContain('u-legend');
  });

  it('builds the same file names from the same sources', () => {
    const again = buildConsoleAssets();
    expect(again.script).toBe(assets.script);
  });
});
