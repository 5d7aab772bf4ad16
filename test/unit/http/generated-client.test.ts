import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAPI_PATH } from '../../../scripts/openapi-build.js';

const TSC = resolve('node_modules/typescript/bin/tsc');

/**
 * What a client's author does with docs/openapi.json: generate its types with openapi-typescript
 * and write against them with plain fetch. The script lists, creates and reads a container; it
 * must type-check, and the same script reading a field no record has must not (so the answers'
 * types come from the document, not from `any`).
 */
const script = (readField: string) => `
import type { paths } from './api.js';

type Json<Path extends keyof paths, Method extends keyof paths[Path]> = paths[Path][Method] extends {
  responses: { 200: { content: { 'application/json': infer Body } } };
}
  ? Body
  : never;
type CreateBody = paths['/api/v1/containers']['post']['requestBody'] extends { content: { 'application/json': infer Body } } ? Body : never;

const base = 'https://api.example.com';
const headers = { authorization: 'Bearer svpat_example', 'content-type': 'application/json' };

export async function listCreateRead(): Promise<string> {
  const listed = (await (await fetch(\`\${base}/api/v1/containers\`, { headers })).json()) as Json<'/api/v1/containers', 'get'>;
  const hostnames: string[] = listed.data.map((container) => container.hostname);
  const body: CreateBody = { hostname: 'hello', port: 8080 };
  const created = (await (await fetch(\`\${base}/api/v1/containers\`, { method: 'POST', headers, body: JSON.stringify(body) })).json()) as Json<
    '/api/v1/containers',
    'post'
  >;
  const state: 'provisioning' | 'running' | 'stopped' | 'failed' = created.data.state;
  const read = (await (await fetch(\`\${base}/api/v1/containers/\${created.data.id}\`, { headers })).json()) as Json<
    '/api/v1/containers/{container_id}',
    'get'
  >;
  const url: string | null = read.data.url;
  return [...hostnames, state, url ?? '', String(${readField})].join(' ');
}
`;

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2023', 'DOM'],
    strict: true,
    noEmit: true,
    skipLibCheck: false,
  },
  files: ['client.ts'],
};

let directory: string;

async function typeCheck(source: string): Promise<string> {
  await writeFile(join(directory, 'client.ts'), source);
  const { stdout } = await promisify(execFile)(process.execPath, [TSC, '-p', directory]).catch((failure: { stdout: string }) => failure);
  return stdout;
}

describe('a client generated from the document with openapi-typescript', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'generated-client-'));
    const { default: openapiTS, astToString } = await import('openapi-typescript');
    const types = astToString(await openapiTS(JSON.parse(await readFile(OPENAPI_PATH, 'utf8'))));
    await writeFile(join(directory, 'api.ts'), types);
    await writeFile(join(directory, 'tsconfig.json'), JSON.stringify({ ...TSCONFIG, files: ['client.ts', 'api.ts'] }));
  });
  afterAll(() => rm(directory, { recursive: true, force: true }));

  it('type-checks a script that lists, creates and reads a container', async () => {
    expect(await typeCheck(script('read.data.restart_count'))).toBe('');
  });

  it('refuses the same script reading a field the record does not have', async () => {
    expect(await typeCheck(script('read.data.no_such_field'))).toContain("Property 'no_such_field' does not exist");
  });
});
