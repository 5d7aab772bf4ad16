import { PROTOTYPE_TABLE } from './confusables-data.js';

/** Characters to the prototype they pass for: confusables.txt of Unicode Technical Standard #39, or part of it. */
export type Prototypes = ReadonlyMap<string, string>;

/**
 * The table's text (scripts/confusables.ts writes it): groups joined by `;`, each a prototype then
 * its sources, joined by `,`. A prototype is its code points in base 36 joined by `.`; the first
 * source is a code point in base 36 and each next one the distance from the one before, so a run
 * of mathematical letters costs a digit or two each.
 */
export function decodePrototypes(table: string): Map<string, string> {
  const prototypes = new Map<string, string>();
  for (const group of table.split(';')) {
    if (!group) continue;
    const [prototype = '', ...sources] = group.split(',');
    const target = String.fromCodePoint(...prototype.split('.').map((codePoint) => Number.parseInt(codePoint, 36)));
    let codePoint = 0;
    for (const step of sources) {
      codePoint += Number.parseInt(step, 36);
      prototypes.set(String.fromCodePoint(codePoint), target);
    }
  }
  return prototypes;
}

/** The inverse of decodePrototypes, for the generator; sources in code point order within a prototype. */
export function encodePrototypes(prototypes: Prototypes): string {
  const sourcesOf = new Map<string, number[]>();
  for (const [source, prototype] of prototypes) {
    const sources = sourcesOf.get(prototype) ?? [];
    sources.push(source.codePointAt(0)!);
    sourcesOf.set(prototype, sources);
  }
  return [...sourcesOf]
    .map(([prototype, sources]) => {
      const target = [...prototype].map((character) => character.codePointAt(0)!.toString(36)).join('.');
      const steps = sources
        .sort((a, b) => a - b)
        .map((codePoint, index) => (codePoint - (index === 0 ? 0 : sources[index - 1]!)).toString(36));
      return [target, ...steps].join(',');
    })
    .join(';');
}

/** The part of confusables.txt that can change whether a name passes for a reserved one (scripts/confusables.ts). */
export const CONFUSABLE_PROTOTYPES: Prototypes = decodePrototypes(PROTOTYPE_TABLE);

/**
 * The skeleton of Unicode Technical Standard #39, section 4 (https://www.unicode.org/reports/tr39/#Confusable_Detection):
 * NFD, each character replaced by its prototype, NFD again. Two strings with the same skeleton
 * look alike; a skeleton is for comparing, never for showing.
 */
export function confusableSkeleton(text: string, prototypes: Prototypes = CONFUSABLE_PROTOTYPES): string {
  let mapped = '';
  for (const character of text.normalize('NFD')) mapped += prototypes.get(character) ?? character;
  return mapped.normalize('NFD');
}
