import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url).pathname;
const sourcesUnder = (dir: string): string[] =>
  readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(dir, file));
/** Static imports and re-exports, and dynamic `import('…')` of a literal specifier. */
const importsOf = (file: string): string[] => {
  const source = readFileSync(join(root, file), 'utf8');
  return [
    ...[...source.matchAll(/^(?:import|export)[^;]*?from '([^']+)'/gms)].map((match) => match[1]!),
    ...[...source.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)].map((match) => match[1]!),
  ];
};
const offendingImports = (dir: string, forbidden: RegExp): string[] =>
  sourcesUnder(dir).flatMap((file) =>
    importsOf(file)
      .filter((specifier) => forbidden.test(specifier))
      .map((specifier) => `${file} -> ${specifier}`),
  );

/** What only the composition roots (lib/wiring, functions/, scripts/) may import. */
const ADAPTERS = /(^@aws-sdk\/)|(\/(store|aws|local|wiring)\/)|(^#wiring\/)/;

describe('layering', () => {
  it.each(['lib/containers', 'lib/dns-routes', 'lib/identity', 'lib/oauth', 'lib/http', 'lib/pages', 'lib/mcp'])(
    '%s imports no adapter and no wiring',
    (dir) => {
      expect(offendingImports(dir, ADAPTERS)).toEqual([]);
    },
  );

  it('lib/local imports neither the AWS adapters nor the wiring, statically or dynamically', () => {
    expect(offendingImports('lib/local', /(\/(aws|wiring)\/)|(^#wiring\/)/)).toEqual([]);
  });

  it('lib/aws imports neither the local adapters nor the wiring', () => {
    expect(offendingImports('lib/aws', /(\/(local|wiring)\/)|(^#wiring\/)/)).toEqual([]);
  });
});
