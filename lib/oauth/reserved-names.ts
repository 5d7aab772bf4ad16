import { FIRST_PARTY_CLI_NAME } from './first-party-client.js';

/**
 * Names no other application may take (RFC 8628 section 5.4): the consent and device pages show
 * an application's name, so one named like this service's own CLI could pass for it. A name is
 * compared by its skeleton, in the spirit of Unicode TR #39's confusable detection but with a
 * small map: NFKC (full-width and styled letters to plain ones), lower case, the look-alikes
 * below to the Latin letter they pass for, and nothing but letters and digits kept (spaces,
 * punctuation, dashes, zero-width and combining characters dropped).
 */

/** Letters from other scripts, and digits, that pass for a Latin letter; after NFKC and lower-casing. */
const LOOK_ALIKES: Readonly<Record<string, string>> = {
  // Cyrillic
  а: 'a',
  в: 'b',
  с: 'c',
  ԁ: 'd',
  е: 'e',
  һ: 'h',
  і: 'i',
  ӏ: 'l',
  ј: 'j',
  к: 'k',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  ԛ: 'q',
  ѕ: 's',
  т: 't',
  ս: 'u',
  ѵ: 'v',
  ԝ: 'w',
  х: 'x',
  у: 'y',
  // Greek
  α: 'a',
  β: 'b',
  ε: 'e',
  η: 'n',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
  γ: 'y',
  // Latin look-alikes
  ı: 'i',
  ł: 'l',
  ɡ: 'g',
  ɩ: 'i',
  ſ: 's',
  // Digits read as letters
  '0': 'o',
  '1': 'l',
  '3': 'e',
  '5': 's',
};

/**
 * Letters that pass for each other even within Latin, folded last: `i`, `l` and `1` (and so `I`)
 * are one, and `rn` reads as `m`, `vv` as `w`.
 */
const FOLDS: ReadonlyArray<[RegExp, string]> = [
  [/rn/g, 'm'],
  [/vv/g, 'w'],
  [/[il]/g, 'l'],
];

/** A name's skeleton: two names with the same skeleton look alike on a page. */
export function nameSkeleton(name: string): string {
  const mapped = [...name.normalize('NFKC').toLowerCase()]
    .map((character) => LOOK_ALIKES[character] ?? character)
    .join('')
    // Accents and other combining marks go with NFD; what is left must be a plain letter or digit.
    .normalize('NFD')
    .replace(/[^a-z0-9]/g, '');
  return FOLDS.reduce((skeleton, [pattern, replacement]) => skeleton.replace(pattern, replacement), mapped);
}

const FIRST_PARTY_SKELETON = nameSkeleton(FIRST_PARTY_CLI_NAME);
/** The service's own name without "CLI": "Container Hosting" alone passes for the service too. */
const SERVICE_SKELETON = nameSkeleton(FIRST_PARTY_CLI_NAME.replace(/\s*CLI$/, ''));

/**
 * True when `name` is, or looks like, the name of this service's own CLI (or of the service
 * itself): its skeleton contains the CLI's, or is the service's name alone.
 */
export function isReservedAppName(name: string): boolean {
  const skeleton = nameSkeleton(name);
  return skeleton.includes(FIRST_PARTY_SKELETON) || skeleton === SERVICE_SKELETON;
}

export const RESERVED_NAME_MESSAGE = `must not be, or look like, "${FIRST_PARTY_CLI_NAME}", the name of this service's own CLI`;
