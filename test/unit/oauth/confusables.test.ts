import { describe, expect, it } from 'vitest';
import { CONFUSABLE_PROTOTYPES, confusableSkeleton, decodePrototypes, encodePrototypes } from '../../../lib/oauth/confusables.js';
import { PROTOTYPE_TABLE } from '../../../lib/oauth/confusables-data.js';
import { skeletonLetters } from '../../../lib/oauth/reserved-names.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repositoryRoot } from '../../../infra/paths.js';
import { compactConfusables, documentWithFigures, fullConfusables, nameCheckConfusables } from '../../../scripts/confusables.js';

/** The whole file and the table the script makes of it: about a minute to compute, so once per file. */
let tables: { full: Map<string, string>; compact: Map<string, string> } | undefined;
function scriptTables() {
  if (!tables) {
    const full = fullConfusables();
    tables = { full, compact: compactConfusables(nameCheckConfusables(full)) };
  }
  return tables;
}

describe('confusableSkeleton (Unicode Technical Standard #39, section 4)', () => {
  it.each([
    ['Coptic', 'ⲥⲟntainer-hⲟsting CLI'],
    ['Armenian', 'cօոtaіոer-hօsting CLI'],
  ])('maps the %s look-alike of the CLI’s name to the CLI’s own skeleton', (_, name) => {
    expect(confusableSkeleton(name)).toBe(confusableSkeleton('container-hosting CLI'));
  });

  it('keeps case and accents, as the standard does: only the name check drops them', () => {
    expect(confusableSkeleton('Cé')).toBe('Ce\u0301');
  });
});

describe('the confusables table', () => {
  it('is what scripts/confusables.ts makes of the pinned confusables.txt (npm run confusables)', () => {
    // Prepare, Act
    const { full, compact } = scriptTables();
    // Assess
    expect(CONFUSABLE_PROTOTYPES).toEqual(compact);
    for (const [source, prototype] of CONFUSABLE_PROTOTYPES) expect(full.get(source), source).toBe(prototype);
    // Every line whose prototype is plain Latin letters still holds in the name check.
    for (const [source, prototype] of full) {
      if (/^[A-Za-z]+$/.test(prototype))
        expect(skeletonLetters(source, 'skeleton-first'), source).toBe(skeletonLetters(prototype, 'skeleton-first'));
    }
  }, 120_000);

  it('is quoted in docs/oauth.md with the figures the script writes (its lines kept of the file, its size)', () => {
    const { full, compact } = scriptTables();
    const document = readFileSync(join(repositoryRoot, 'docs/oauth.md'), 'utf8');
    expect(documentWithFigures(document, full, compact)).toBe(document);
  }, 120_000);

  it('reads back what it writes', () => {
    const table = encodePrototypes(decodePrototypes(PROTOTYPE_TABLE));
    expect(decodePrototypes(table)).toEqual(CONFUSABLE_PROTOTYPES);
    expect(table.length).toBe(PROTOTYPE_TABLE.length);
  });
});
