import { describe, expect, it } from 'vitest';
import { isReservedAppName } from '../../../lib/oauth/reserved-names.js';

describe('isReservedAppName', () => {
  it.each([
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
