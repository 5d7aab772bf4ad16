import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WORKLOAD, WORKLOAD_KEYS } from '../../lib/containers/workload.js';
import { errorKinds } from '../../lib/http/openapi.js';
import { ECS_PERMISSIONS } from '../../lib/http/routes/route.js';

/*
 * Where a change goes (docs/architecture.md), counted: the source files a new workload field and
 * a new container action are written in, each found where it is said to be; and the places that
 * derive from them, which must name none of what they derive (else they would be one more file
 * to touch). The scratch field and action that show the derivation are
 * test/unit/containers/workload-declaration.test.ts and test/infra/action-declaration.test.ts.
 */

const root = new URL('../../', import.meta.url).pathname;
const read = (file: string) => readFileSync(join(root, file), 'utf8');
const sourcesUnder = (dir: string): string[] =>
  readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(dir, file));

/** The runtimes: each class that implements the runtime port, wherever its file is. */
const runtimeFiles = sourcesUnder('lib').filter((file) => /\bclass \w+ implements (?:Reconcilable|Container)Runtime\b/.test(read(file)));

interface Site {
  file: string;
  /** What in the file shows it is the place: the declaration a change adds to. */
  holds: RegExp;
  what: string;
}

const runtimeSites: Site[] = runtimeFiles.map((file) => ({
  file,
  holds: /implements (?:Reconcilable|Container)Runtime/,
  what: 'a runtime that honours it',
}));

const FIELD_SITES: Site[] = [
  { file: 'lib/containers/workload.ts', holds: /export const WORKLOAD = \{/, what: 'the declaration: name, fallback, JSON form' },
  {
    file: 'lib/containers/workload-rules.ts',
    holds: /export const WORKLOAD_RULES = \{/,
    what: 'its rule, whose description docs/fields.md prints',
  },
  ...runtimeSites,
];

const ACTION_SITES: Site[] = [
  {
    file: 'lib/http/routes/containers.ts',
    holds: /export const containerRoutes = \[/,
    what: 'its row: method, path, access, scope, body, table access, ECS grant, what it answers',
  },
  { file: 'functions/containers/<action>.ts', holds: /endpoint\(/, what: 'the thin handler, a new file' },
  { file: 'lib/containers/schemas.ts', holds: /export const updateContainerBody/, what: "its body's schema" },
  { file: 'lib/containers/container-service.ts', holds: /export class ContainerService\b/, what: 'the operation' },
  { file: 'lib/containers/runtime.ts', holds: /export interface ContainerRuntime \{/, what: 'the port gains the call' },
  ...runtimeSites,
];

/** A handler the new one is written like, for the site that is a new file. */
const existing = (site: Site) => (site.file.includes('<action>') ? site.file.replace('<action>', 'restart') : site.file);

describe('the files a change touches', () => {
  it('finds three runtimes, each implementing the port', () => {
    expect(runtimeFiles).toHaveLength(3);
  });

  it.each([
    ['a workload field', 5, FIELD_SITES],
    ['a container action', 8, ACTION_SITES],
  ] as const)('%s is written in at most %d files, each holding what it is said to', (_change, most, sites) => {
    for (const site of sites) {
      expect(existsSync(join(root, existing(site))), site.file).toBe(true);
      expect(read(existing(site)), `${site.file}: ${site.what}`).toMatch(site.holds);
    }
    expect(new Set(sites.map((site) => site.file)).size).toBe(sites.length);
    expect(sites.length).toBeLessThanOrEqual(most);
  });
});

describe('the places that derive from the declarations', () => {
  const fieldNames = WORKLOAD_KEYS.map((key) => WORKLOAD[key].name);
  /** A name in a string literal (backticks left out: comments quote names in them). */
  const quoted = (names: readonly string[]) => new RegExp(`['"](?:${names.join('|')})['"]`);

  it.each([
    // The request schemas' document and the clients that draw forms, flags and lines from it.
    'lib/http/openapi-fields.ts',
    'cli/src/fields.ts',
    'web/console/schema-form.ts',
    // The record, the view, the stored item and its update.
    'lib/http/records.ts',
    'lib/containers/container.ts',
    'lib/store/entities/container.ts',
    'lib/store/dynamo-container-store.ts',
  ])('%s names no workload field', (file) => {
    expect(read(file)).not.toMatch(quoted(fieldNames));
  });

  it("the stub runtime of functions that never reach one names none of the port's calls", () => {
    const port = read('lib/containers/runtime.ts');
    const block = port.slice(port.indexOf('export interface ContainerRuntime {'));
    const calls = [...block.slice(0, block.indexOf('\n}')).matchAll(/^ {2}(\w+)\(/gm)].map((match) => match[1]!);
    expect(calls).toEqual(expect.arrayContaining(['runTask', 'stopTask', 'describeTask']));
    expect(read('lib/wiring/containers.ts')).not.toMatch(new RegExp(`\\b(?:${calls.join('|')})\\b`));
  });

  it("the stack's grants name no ECS action a row of ECS_PERMISSIONS grants", () => {
    const granted = Object.values(ECS_PERMISSIONS).flatMap((permission) => [...permission.actions]);
    expect(read('infra/constructs/route-permissions.ts')).not.toMatch(quoted(granted));
  });

  it('the OpenAPI document names no envelope code: each error class in lib/errors.ts gives its status and code', () => {
    const codes = errorKinds().map((error) => error.code);
    expect(read('lib/http/openapi.ts')).not.toMatch(new RegExp(`['"](?:${codes.join('|')})['"]`));
  });
});
