import { describe, expect, it } from 'vitest';
import { FIRST_PARTY_CLI_NAME } from '../../../lib/oauth/first-party-client.js';
import { isReservedAppName, nameSkeleton } from '../../../lib/oauth/reserved-names.js';

/**
 * Lines of confusables.txt (Unicode Technical Standard #39, version 16.0.0, as Unicode publishes it),
 * copied as they stand: each source must have the skeleton of its prototype.
 */
const CONFUSABLES_SAMPLE = `
2C9A ;\t004E ;\tMA\t# ( Ⲛ → N ) COPTIC CAPITAL LETTER NI → LATIN CAPITAL LETTER N\t#
A4E0 ;\t004E ;\tMA\t# ( ꓠ → N ) LISU LETTER NA → LATIN CAPITAL LETTER N\t#
10513 ;\t004E ;\tMA\t# ( 𐔓 → N ) ELBASAN LETTER NE → LATIN CAPITAL LETTER N\t#
1D6EE ;\t004E ;\tMA\t# ( 𝛮 → N ) MATHEMATICAL ITALIC CAPITAL NU → LATIN CAPITAL LETTER N\t# →𝑁→
03B7 ;\t006E 0329 ;\tMA\t# ( η → n̩ ) GREEK SMALL LETTER ETA → LATIN SMALL LETTER N, COMBINING VERTICAL LINE BELOW\t# →ƞ→
01CC ;\t006E 006A ;\tMA\t# ( ǌ → nj ) LATIN SMALL LETTER NJ → LATIN SMALL LETTER N, LATIN SMALL LETTER J\t#
2116 ;\t004E 006F ;\tMA\t#* ( № → No ) NUMERO SIGN → LATIN CAPITAL LETTER N, LATIN SMALL LETTER O\t#
0438 ;\t1D0E ;\tMA\t# ( и → ᴎ ) CYRILLIC SMALL LETTER I → LATIN LETTER SMALL CAPITAL REVERSED N\t#
0966 ;\t006F ;\tMA\t# ( ० → o ) DEVANAGARI DIGIT ZERO → LATIN SMALL LETTER O\t#
FF4F ;\t006F ;\tMA\t# ( ｏ → o ) FULLWIDTH LATIN SMALL LETTER O → LATIN SMALL LETTER O\t# →о→
1D428 ;\t006F ;\tMA\t# ( 𝐨 → o ) MATHEMATICAL BOLD SMALL O → LATIN SMALL LETTER O\t#
03C3 ;\t006F ;\tMA\t# ( σ → o ) GREEK SMALL LETTER SIGMA → LATIN SMALL LETTER O\t#
2C9F ;\t006F ;\tMA\t# ( ⲟ → o ) COPTIC SMALL LETTER O → LATIN SMALL LETTER O\t#
0585 ;\t006F ;\tMA\t# ( օ → o ) ARMENIAN SMALL LETTER OH → LATIN SMALL LETTER O\t#
05E1 ;\t006F ;\tMA\t# ( ס → o ) HEBREW LETTER SAMEKH → LATIN SMALL LETTER O\t#
0647 ;\t006F ;\tMA\t# ( ه → o ) ARABIC LETTER HEH → LATIN SMALL LETTER O\t#
104EA ;\t006F ;\tMA\t# ( 𐓪 → o ) OSAGE SMALL LETTER O → LATIN SMALL LETTER O\t#
0030 ;\t004F ;\tMA\t# ( 0 → O ) DIGIT ZERO → LATIN CAPITAL LETTER O\t#
2C9E ;\t004F ;\tMA\t# ( Ⲟ → O ) COPTIC CAPITAL LETTER O → LATIN CAPITAL LETTER O\t#
0555 ;\t004F ;\tMA\t# ( Օ → O ) ARMENIAN CAPITAL LETTER OH → LATIN CAPITAL LETTER O\t#
A4F3 ;\t004F ;\tMA\t# ( ꓳ → O ) LISU LETTER O → LATIN CAPITAL LETTER O\t#
00F8 ;\t006F 0338 ;\tMA\t# ( ø → o̸ ) LATIN SMALL LETTER O WITH STROKE → LATIN SMALL LETTER O, COMBINING LONG SOLIDUS OVERLAY\t# →o̷→
0473 ;\t006F 0335 ;\tMA\t# ( ѳ → o̵ ) CYRILLIC SMALL LETTER FITA → LATIN SMALL LETTER O, COMBINING SHORT STROKE OVERLAY\t#
2010 ;\t002D ;\tMA\t#* ( ‐ → - ) HYPHEN → HYPHEN-MINUS\t#
00A0 ;\t0020 ;\tMA\t#* (   →   ) NO-BREAK SPACE → SPACE\t#
`
  .trim()
  .split('\n')
  .map((line) => {
    const [source = '', prototype = '', , comment = ''] = line.split(/\s*[;\t]\s*/);
    const text = (codePoints: string) => String.fromCodePoint(...codePoints.split(' ').map((hex) => Number.parseInt(hex, 16)));
    return { source: text(source), prototype: text(prototype), comment };
  });

describe('nameSkeleton', () => {
  it.each(CONFUSABLES_SAMPLE)('gives a line of confusables.txt the skeleton of its prototype: $comment', ({ source, prototype }) => {
    expect(nameSkeleton(`container ${source} hosting`)).toBe(nameSkeleton(`container ${prototype} hosting`));
  });

  it.each([
    ['Coptic', 'ⲥⲟntainer-hⲟsting CLI'],
    ['Armenian', 'cօոtaіոer-hօsting CLI'],
  ])('gives the %s look-alike of the CLI’s name the CLI’s skeleton', (_, name) => {
    expect(nameSkeleton(name)).toBe(nameSkeleton(FIRST_PARTY_CLI_NAME));
  });
});

describe('isReservedAppName', () => {
  it.each([
    ['Coptic look-alikes', 'ⲥⲟntainer-hⲟsting CLI'],
    ['Armenian look-alikes', 'cօոtaіոer-hօsting CLI'],
    ['Lisu and Coptic capitals', 'ⲤꓳNTAINER-HOSTING CLI'],
    ['a Greek lunate sigma (NFKC would make it a final sigma)', 'ϲontainer-hosting CLI'],
    ['a full-width hyphen (the skeleton would make it a letter)', 'ｃｏｎｔａｉｎｅｒ－ｈｏｓｔｉｎｇ ＣＬＩ'],
    ['an em dash (the skeleton would make it a letter)', 'container—hosting CLI'],
    ['a katakana prolonged sound mark for the dash', 'containerーhosting CLI'],
    ['small capitals the file keeps as they are', 'ᴄᴏɴᴛᴀɪɴᴇʀ-ʜᴏꜱᴛɪɴɢ ᴄʟɪ'],
    ['a Cyrillic small te drawn as a small capital', 'conтainer-hosтing CLI'],
    ['the name itself', 'container-hosting CLI'],
    ['another case', 'Container-Hosting cli'],
    ['spaces for the dash', 'container hosting cli'],
    ['other punctuation and spacing', '  Container_Hosting . C.L.I  '],
    ['no separator', 'containerhostingCLI'],
    ['full-width letters (NFKC)', 'ｃｏｎｔａｉｎｅｒ-ｈｏｓｔｉｎｇ ＣＬＩ'],
    ['Cyrillic look-alikes', 'соntаinеr-hоsting CLI'],
    ['Greek omicron and a digit one', 'cοntainer-hosting CL1'],
    ['a lower-case L for the I', 'container-hosting CLl'],
    ['a zero-width space', 'container-host\u200bing CLI'],
    ['accents', 'contàinér-hosting CLÍ'],
    ['a longer name around it', 'Official container-hosting CLI (signed)'],
    ['the service name alone', 'Container Hosting'],
    ['a Greek capital Nu', 'CoΝtainer-Hosting CLI'],
    ['a Greek capital Eta', 'Container-Ηosting CLI'],
    ['a Latin alpha', 'contɑiner-hosting CLI'],
    ['a small capital C', 'ᴄontainer-hosting CLI'],
    ['a Cherokee letter', 'container-hosting ᏟLI'],
    ['a letter no map knows (a wildcard)', 'contaiꞑer-hosting CLI'],
    ['the service name and another word', 'Container Hosting Login'],
    ['the service name and more words', 'Container Hosting Command Line'],
  ])('refuses %s: %s', (_, name) => {
    expect(isReservedAppName(name)).toBe(true);
  });

  it.each([
    ['Fleet Dashboard'],
    ['My container hosting helper'],
    ['hosting CLI'],
    ['Terminal'],
    ['Acme Deploy'],
    ['Hosting Dashboard'],
    ['My container tool'],
    ['Container tools'],
    ['Δείκτης φορτίου εφαρμογών'],
    ['容器托管命令行工具客户端应用程序'],
  ])('accepts %s', (name) => {
    expect(isReservedAppName(name)).toBe(false);
  });
});
