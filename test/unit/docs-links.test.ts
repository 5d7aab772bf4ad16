import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The docs are read by following pointers: a link in one document to another (and to a heading
 * in it), and a comment in the code naming a document and a heading (`docs/oauth.md, "Refresh
 * retries"`). A pointer that leads nowhere is a dead end for the reader; this finds every one.
 */

const root = resolve(import.meta.dirname, '../..');
const SKIPPED_DIRECTORIES = new Set(['node_modules', '.git', 'cdk.out', '.data', '.lambda-bundles', 'dist']);

function filesUnder(directory: string, keep: (name: string) => boolean): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) return SKIPPED_DIRECTORIES.has(name) ? [] : filesUnder(path, keep);
    return keep(name) ? [path] : [];
  });
}

const markdownFiles = filesUnder(root, (name) => name.endsWith('.md'));
const codeFiles = ['lib', 'functions', 'infra', 'cli/src', 'scripts', 'web/console', 'test'].flatMap((folder) =>
  filesUnder(join(root, folder), (name) => name.endsWith('.ts') || name.endsWith('.mjs')),
);

/** A document's headings, as written (without the #s). Fenced code is not a heading. */
function headingsOf(path: string): string[] {
  const headings: string[] = [];
  let fenced = false;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    else if (!fenced && /^#{1,6} /.test(line)) headings.push(line.replace(/^#+ /, '').trim());
  }
  return headings;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const anchorOf = (heading: string): string =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replaceAll(' ', '-');

describe('pointers into the docs', () => {
  it('every relative link in a document reaches a file, and its #anchor a heading there', () => {
    const dead: string[] = [];
    for (const file of markdownFiles) {
      const text = readFileSync(file, 'utf8')
        .replace(/```[\s\S]*?```/g, '')
        .replace(/`[^`\n]*`/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target!)) continue;
        const [pathPart, anchor] = target!.split('#');
        const linked = pathPart ? resolve(dirname(file), pathPart) : file;
        if (!existsSync(linked)) {
          dead.push(`${relative(root, file)}: ${target} (no such file)`);
          continue;
        }
        if (anchor && linked.endsWith('.md') && !headingsOf(linked).some((heading) => anchorOf(heading) === anchor)) {
          dead.push(`${relative(root, file)}: ${target} (no such heading)`);
        }
      }
    }
    expect(dead).toEqual([]);
  });

  it('every comment naming a document and a heading names one that exists', () => {
    const pointer = /\b(docs\/[\w-]+\.md|README(?:\.md)?)[,:]? *"([^"]{2,80})"/g;
    const dead: string[] = [];
    let checked = 0;
    for (const file of codeFiles) {
      // A pointer may run over two comment lines.
      const text = readFileSync(file, 'utf8').replace(/\n\s*(?:\*|\/\/)\s*/g, ' ');
      for (const [, document, heading] of text.matchAll(pointer)) {
        const path = join(root, document!.startsWith('README') ? 'README.md' : document!);
        checked += 1;
        // A pointer may shorten a heading to its start: "Restart" for "Restart (zero downtime)".
        if (!existsSync(path) || !headingsOf(path).some((each) => each.startsWith(heading!))) {
          dead.push(`${relative(root, file)}: ${document}, "${heading}"`);
        }
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect([...new Set(dead)]).toEqual([]);
  });
});
