import { FIRST_PARTY_CLI_NAME } from './first-party-client.js';

/**
 * Names no other application may take (RFC 8628 section 5.4): the consent and device pages show
 * an application's name, so one named like this service's own CLI could pass for it. A name is
 * compared by its skeleton, in the spirit of Unicode TR #39's confusable detection but with a
 * small map: NFKC (full-width and styled letters to plain ones), capital look-alikes to the Latin
 * letter they pass for (before lower-casing, which would turn a Greek capital Nu into a nu that
 * reads as v), lower case, the small look-alikes below, and nothing but letters and digits kept
 * (spaces, punctuation, dashes, zero-width and combining characters dropped). No small map knows
 * every script, so any other letter left over is a wildcard that matches any letter.
 */

/** Capitals of other scripts that pass for a Latin letter; mapped before lower-casing. */
const CAPITAL_LOOK_ALIKES: Readonly<Record<string, string>> = {
  // Greek
  Α: 'a',
  Β: 'b',
  Ε: 'e',
  Ζ: 'z',
  Η: 'h',
  Ι: 'i',
  Κ: 'k',
  Μ: 'm',
  Ν: 'n',
  Ο: 'o',
  Ρ: 'p',
  Τ: 't',
  Υ: 'y',
  Χ: 'x',
  // Cyrillic
  А: 'a',
  В: 'b',
  С: 'c',
  Е: 'e',
  Н: 'h',
  І: 'i',
  Ј: 'j',
  К: 'k',
  М: 'm',
  О: 'o',
  Р: 'p',
  Ѕ: 's',
  Т: 't',
  Х: 'x',
  // Cherokee (its capitals lower-case to letters that no longer look Latin)
  Ꭺ: 'a',
  Ᏼ: 'b',
  Ꮯ: 'c',
  Ꭼ: 'e',
  Ꮋ: 'h',
  Ꭵ: 'i',
  Ꮶ: 'k',
  Ꮮ: 'l',
  Ꮇ: 'm',
  Ꮲ: 'p',
  Ꮪ: 's',
  Ꭲ: 't',
  Ꮩ: 'v',
  Ꮃ: 'w',
};

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
  // Latin look-alikes, and small capitals
  ɑ: 'a',
  ᴀ: 'a',
  ʙ: 'b',
  ᴄ: 'c',
  ᴅ: 'd',
  ᴇ: 'e',
  ɢ: 'g',
  ʜ: 'h',
  ɪ: 'i',
  ᴊ: 'j',
  ᴋ: 'k',
  ʟ: 'l',
  ᴍ: 'm',
  ɴ: 'n',
  ᴏ: 'o',
  ᴘ: 'p',
  ʀ: 'r',
  ꜱ: 's',
  ᴛ: 't',
  ᴜ: 'u',
  ᴠ: 'v',
  ᴡ: 'w',
  ʏ: 'y',
  ᴢ: 'z',
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

/** In a skeleton, a letter no map knows: it may pass for any letter. */
const WILDCARD = '?';
/** At most this many wildcards in a match, so a name in another script is not refused for its length alone. */
const MAX_WILDCARDS = 2;

/** A name's skeleton: two names with the same skeleton look alike on a page. */
export function nameSkeleton(name: string): string {
  const mapped = [...name.normalize('NFKC')]
    .map((character) => CAPITAL_LOOK_ALIKES[character] ?? character)
    .join('')
    .toLowerCase();
  const skeleton = [...mapped]
    .map((character) => LOOK_ALIKES[character] ?? character)
    .join('')
    // Accents and other combining marks go with NFD; a letter still not plain Latin is a wildcard.
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/[^a-z0-9\p{L}]/gu, '')
    .replace(/[^a-z0-9]/g, WILDCARD);
  return FOLDS.reduce((folded, [pattern, replacement]) => folded.replace(pattern, replacement), skeleton);
}

/** Whether `skeleton` holds `wanted` at `offset`, a wildcard matching any letter, with at most MAX_WILDCARDS of them. */
function matchesAt(skeleton: string, wanted: string, offset: number): boolean {
  let wildcards = 0;
  for (let index = 0; index < wanted.length; index += 1) {
    const character = skeleton[offset + index];
    if (character === WILDCARD) wildcards += 1;
    else if (character !== wanted[index]) return false;
  }
  return wildcards <= MAX_WILDCARDS;
}

const contains = (skeleton: string, wanted: string): boolean => {
  for (let offset = 0; offset + wanted.length <= skeleton.length; offset += 1) {
    if (matchesAt(skeleton, wanted, offset)) return true;
  }
  return false;
};

const FIRST_PARTY_SKELETON = nameSkeleton(FIRST_PARTY_CLI_NAME);
/** The service's own name without "CLI": "Container Hosting" alone, or first, passes for the service too. */
const SERVICE_SKELETON = nameSkeleton(FIRST_PARTY_CLI_NAME.replace(/\s*CLI$/, ''));

/**
 * True when `name` is, or looks like, the name of this service's own CLI (or of the service
 * itself): its skeleton contains the CLI's, or starts with the service's name ("Container
 * Hosting Login" passes for the service's own as well as the CLI does).
 */
export function isReservedAppName(name: string): boolean {
  const skeleton = nameSkeleton(name);
  return contains(skeleton, FIRST_PARTY_SKELETON) || matchesAt(skeleton, SERVICE_SKELETON, 0);
}

export const RESERVED_NAME_MESSAGE = `must not be, or look like, "${FIRST_PARTY_CLI_NAME}", the name of this service's own CLI, or start with the service's name`;
