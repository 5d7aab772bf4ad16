import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url).pathname;
const sourcesUnder = (dir: string): string[] =>
  readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(dir, file));
const importsOf = (file: string): string[] =>
  [...readFileSync(join(root, file), 'utf8').matchAll(/^import[^;]*?from '([^']+)'/gms)].map((match) => match[1]!);

/** What only the composition roots (lib/wiring, functions/, the local server) may import. */
const ADAPTERS = /(^@aws-sdk\/)|(\/(store|runtimes|metrics|local|wiring)\/)|(^#wiring\/)/;

describe('layering', () => {
  it.each(['lib/containers', 'lib/identity', 'lib/oauth', 'lib/http', 'lib/pages'])('%s imports no adapter and no wiring', (dir) => {
    const offending = sourcesUnder(dir).flatMap((file) =>
      importsOf(file)
        .filter((specifier) => ADAPTERS.test(specifier))
        .map((specifier) => `${file} -> ${specifier}`),
    );
    expect(offending).toEqual([]);
  });
});
