import { CONFUSABLE_PROTOTYPES, confusableSkeleton, type Prototypes } from './confusables.js';
import { FIRST_PARTY_CLI_NAME } from './first-party-client.js';

/**
 * Names no other application may take (RFC 8628 section 5.4): the consent and device pages show
 * an application's name, so one named like this service's own CLI could pass for it. Names are
 * compared by the confusable skeleton of Unicode Technical Standard #39 over Unicode's own
 * confusables.txt (lib/oauth/confusables.ts), made case-blind and blind to what sits between
 * letters: the skeleton (a Coptic, Armenian, Cherokee or Greek letter to the Latin one it passes
 * for, capitals to capitals) and NFKC (full-width and styled letters the file leaves out), lower
 * case, the skeleton again (a lower-cased prototype may itself pass for another), the small
 * capitals below, marks dropped (accents), and nothing but letters and digits kept (spaces,
 * punctuation, dashes, zero-width characters, modifier letters). The file's lines that make a
 * punctuation mark a letter of another script (an em dash a katakana prolonged sound mark) are
 * left out (scripts/confusables.ts). The skeleton and NFKC disagree on a few characters, so a
 * name is read both ways round and refused if either reading matches: the skeleton first makes a
 * lunate sigma a c, where NFKC first makes it a final sigma, which the file maps to nothing.
 */

/**
 * Latin letters that pass for each other once case is gone, folded last: a capital I is an l, so
 * `i` and `l` are one; the skeleton writes `m` as `rn`, and `vv` reads as `w`; 3 and 5 read as e and s.
 */
const FOLDS: ReadonlyArray<[RegExp, string]> = [
  [/rn/g, 'm'],
  [/vv/g, 'w'],
  [/[il]/g, 'l'],
  [/3/g, 'e'],
  [/5/g, 's'],
];

/**
 * Letters that pass for a Latin letter once case is gone but that confusables.txt maps to none
 * (it keeps a small capital as its own prototype, and maps a Cyrillic small em to a small capital):
 * the name check's own additions, applied after the skeleton, as it refused them before.
 */
const SMALL_CAPITAL_LOOK_ALIKES: Readonly<Record<string, string>> = {
  ᴀ: 'a',
  ʙ: 'b',
  ᴅ: 'd',
  ᴇ: 'e',
  ɢ: 'g',
  ʜ: 'h',
  ᴊ: 'j',
  ᴋ: 'k',
  ʟ: 'l',
  ᴍ: 'm',
  ɴ: 'n',
  ᴘ: 'p',
  ʀ: 'r',
  ᴛ: 't',
  // Cyrillic and Greek small letters drawn as small capitals
  в: 'b',
  к: 'k',
  м: 'm',
  н: 'h',
  т: 't',
  β: 'b',
  ε: 'e',
  κ: 'k',
  τ: 't',
  χ: 'x',
};

/** In a skeleton, a letter of another script that confusables.txt maps to no Latin one: it may pass for any letter. */
const WILDCARD = '?';
/** At most this many wildcards in a match, so a name in another script is not refused for its length alone. */
const MAX_WILDCARDS = 2;

const lowerCaseEach = (text: string): string => {
  let lowered = '';
  // Character by character, so the result never depends on the neighbours (a Greek final sigma).
  for (const character of text) lowered += character.toLowerCase();
  return lowered;
};

/** The two readings of a name: the skeleton before NFKC, or NFKC before the skeleton. */
export type Reading = 'skeleton-first' | 'compatibility-first';

/**
 * A name's letters as the skeleton sees them, before the Latin folds: only `a`-`z`, `0`-`9` and
 * WILDCARD. Each character's part depends on that character alone, which lets scripts/confusables.ts
 * keep only the table entries that change some character's part.
 */
export function skeletonLetters(name: string, reading: Reading, prototypes: Prototypes = CONFUSABLE_PROTOTYPES): string {
  const plain =
    reading === 'skeleton-first'
      ? confusableSkeleton(name, prototypes).normalize('NFKC')
      : confusableSkeleton(name.normalize('NFKC'), prototypes);
  let latin = '';
  for (const character of confusableSkeleton(lowerCaseEach(plain), prototypes)) latin += SMALL_CAPITAL_LOOK_ALIKES[character] ?? character;
  return (
    latin
      .replace(/\p{M}/gu, '')
      // Modifier letters go too: a katakana prolonged sound mark is the file's prototype of a dash.
      .replace(/[^a-z0-9\p{L}]|\p{Lm}/gu, '')
      .replace(/[^a-z0-9]/g, WILDCARD)
  );
}

const folded = (letters: string): string => FOLDS.reduce((text, [pattern, replacement]) => text.replace(pattern, replacement), letters);

/** A name's skeleton (read skeleton first): two names with the same skeleton look alike on a page. */
export function nameSkeleton(name: string, reading: Reading = 'skeleton-first'): string {
  return folded(skeletonLetters(name, reading));
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

export const READINGS: readonly Reading[] = ['skeleton-first', 'compatibility-first'];
const FIRST_PARTY_SKELETON = nameSkeleton(FIRST_PARTY_CLI_NAME);
/** The service's own name without "CLI": "Container Hosting" alone, or first, passes for the service too. */
const SERVICE_SKELETON = nameSkeleton(FIRST_PARTY_CLI_NAME.replace(/\s*CLI$/, ''));

/**
 * True when `name` is, or looks like, the name of this service's own CLI (or of the service
 * itself): its skeleton contains the CLI's, or starts with the service's name ("Container
 * Hosting Login" passes for the service's own as well as the CLI does).
 */
export function isReservedAppName(name: string): boolean {
  return READINGS.some((reading) => {
    const skeleton = nameSkeleton(name, reading);
    return contains(skeleton, FIRST_PARTY_SKELETON) || matchesAt(skeleton, SERVICE_SKELETON, 0);
  });
}

export const RESERVED_NAME_MESSAGE = `must not be, or look like, "${FIRST_PARTY_CLI_NAME}", the name of this service's own CLI, or start with the service's name`;
