import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * A source file is read from its top: one over 300 lines says at its first line why it is that
 * long (`// Over 300 lines because …`), so a reader knows whether to expect one concern or to
 * look for the seam to split it along (issue 36 item 3).
 */

const root = new URL('../../', import.meta.url).pathname;
const LIMIT = 300;
/** Generated, never read through: `npm run openapi` writes it from docs/openapi.json. */
const GENERATED = new Set(['lib/http/openapi-types.ts']);
/** Files over the limit without the sentence, each with the reason it may be. */
const EXCEPTIONS: Readonly<Record<string, string>> = {};
const WHY = /^\/\/ Over 300 lines because \S[^\n]*(?:\n\/\/ [^\n]+)*\.\n/;

const sourcesUnder = (folder: string): string[] =>
  readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.split('/').includes('node_modules') && !file.split('/').includes('dist'))
    .map((file) => `${folder}/${file}`);

const lineCount = (text: string): number => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

describe('source files', () => {
  const sources = ['lib', 'cli', 'web', 'infra']
    .flatMap(sourcesUnder)
    .filter((file) => !GENERATED.has(file))
    .map((file) => ({ file, text: readFileSync(join(root, file), 'utf8') }));

  it(`over ${LIMIT} lines say at their top why they are that long`, () => {
    // Act
    const unexplained = sources
      .filter(({ file, text }) => lineCount(text) > LIMIT && !(file in EXCEPTIONS) && !WHY.test(text))
      .map(({ file, text }) => `${file} (${lineCount(text)} lines)`);
    // Assess
    expect(unexplained).toEqual([]);
  });

  it('name no exception that is not over the limit any more, and give each a reason', () => {
    for (const [file, reason] of Object.entries(EXCEPTIONS)) {
      const source = sources.find((each) => each.file === file);
      expect(source, file).toBeDefined();
      expect(lineCount(source!.text), file).toBeGreaterThan(LIMIT);
      expect(reason.length, file).toBeGreaterThan(20);
    }
  });

  it('keep the sentence only while they are over the limit', () => {
    const stale = sources.filter(({ text }) => lineCount(text) <= LIMIT && WHY.test(text)).map(({ file }) => file);
    expect(stale).toEqual([]);
  });
});
