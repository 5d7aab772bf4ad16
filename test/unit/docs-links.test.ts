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
/** Every file a comment may point from: sources, scripts (shell ones too), the Caddyfile and the tests. */
const codeFiles = ['lib', 'functions', 'infra', 'cli/src', 'scripts', 'web/console', 'test', 'examples'].flatMap((folder) =>
  filesUnder(join(root, folder), (name) => /\.(ts|mjs|js|sh|java)$/.test(name) || name === 'Caddyfile' || name === 'Containerfile'),
);
const documentPath = (document: string): string => join(root, document.startsWith('README') ? 'README.md' : document);

/** Prose without fenced blocks and inline code, where a pointer is meant for the reader. */
const proseOf = (text: string): string => text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');

/** A pointer by name and heading (`docs/oauth.md, "Refresh retries"`), in code or in a document's prose. */
const namedPointer = /\b(docs\/[\w-]+\.md|README(?:\.md)?)[,:]? *\(?"([^"]{2,80})"/g;

/** Whether a heading of the document starts with the words a pointer names: "Restart" for "Restart (zero downtime)". */
const namesAHeading = (document: string, heading: string): boolean =>
  existsSync(documentPath(document)) && headingsOf(documentPath(document)).some((each) => each.startsWith(heading));

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
      const text = proseOf(readFileSync(file, 'utf8'));
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
    const dead: string[] = [];
    let checked = 0;
    for (const file of codeFiles) {
      // A pointer may run over two comment lines.
      const text = readFileSync(file, 'utf8').replace(/\n\s*(?:\*|\/\/|#)\s*/g, ' ');
      for (const [, document, heading] of text.matchAll(namedPointer)) {
        checked += 1;
        if (!namesAHeading(document!, heading!)) dead.push(`${relative(root, file)}: ${document}, "${heading}"`);
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect([...new Set(dead)]).toEqual([]);
  });

  it('every document named in a comment exists, and its #anchor is a heading there', () => {
    const dead: string[] = [];
    for (const file of codeFiles) {
      const text = readFileSync(file, 'utf8');
      for (const [, document, anchor] of text.matchAll(/\b(docs\/[\w./-]+\.(?:md|json)|README\.md)(?:#([\w-]+))?/g)) {
        const path = documentPath(document!);
        if (!existsSync(path)) dead.push(`${relative(root, file)}: ${document} (no such file)`);
        else if (anchor && !headingsOf(path).some((heading) => anchorOf(heading) === anchor))
          dead.push(`${relative(root, file)}: ${document}#${anchor} (no such heading)`);
      }
    }
    expect([...new Set(dead)]).toEqual([]);
  });

  it("every pointer by name in a document's prose names a heading that exists", () => {
    const dead: string[] = [];
    for (const file of markdownFiles) {
      const prose = proseOf(readFileSync(file, 'utf8')).replace(/\s*\n\s*/g, ' ');
      for (const [, document, heading] of prose.matchAll(namedPointer)) {
        if (!namesAHeading(document!, heading!)) dead.push(`${relative(root, file)}: ${document}, "${heading}"`);
      }
    }
    expect([...new Set(dead)]).toEqual([]);
  });
});
