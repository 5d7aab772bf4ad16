import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { WORKLOAD, WORKLOAD_KEYS } from '../../../lib/containers/workload.js';
import { bodyFieldsOf, containerRequestSchemasOf, fieldAt, labelOf, valueFromText } from '../../../lib/http/openapi-fields.js';

const document = JSON.parse(readFileSync(new URL('../../../docs/openapi.json', import.meta.url), 'utf8'));

describe('bodyFieldsOf', () => {
  it("reads the container create body's fields from the OpenAPI document, in its order, each with its kind", () => {
    // Prepare
    const { create } = containerRequestSchemasOf(document);

    // Act
    const fields = bodyFieldsOf(create);

    // Assess
    // The hostname, then every workload field in the declaration's order, then the write-only credentials.
    expect(fields.map((field) => field.path)).toEqual([
      'hostname',
      ...WORKLOAD_KEYS.map((key) => WORKLOAD[key].name),
      'registry_credentials',
    ]);
    const kindOf = (path: string) => fields.find((field) => field.path === path)?.kind;
    expect(['hostname', 'port', 'env', 'command', 'cpu_cores', 'health_check', 'mounts', 'registry_credentials'].map(kindOf)).toEqual([
      'text',
      'integer',
      'map',
      'list',
      'choice',
      'group',
      'records',
      'group',
    ]);
    expect(fields.find((field) => field.path === 'hostname')).toMatchObject({ required: true, nullable: false });
    expect(fields.find((field) => field.path === 'memory_mb')).toMatchObject({ label: 'Memory (MB)', default: 512, minimum: 512 });
    expect(fields.find((field) => field.path === 'memory_mb')!.maximum).toBeUndefined();
    expect(fields.find((field) => field.path === 'cpu_cores')!.choices).toEqual([1, 2, 4, 8, 16]);
    expect(fieldAt(fields, 'health_check.interval_s')).toMatchObject({ label: 'Interval (s)', kind: 'integer', required: false });
    expect(fields.find((field) => field.path === 'health_check')).toMatchObject({ nullable: true, label: 'Health check' });
  });

  it('gives a field added to the document to the clients with no other edit (a scratch list field)', () => {
    // Prepare: a field as lib would declare it, written into the document by npm run openapi.
    const scratch = structuredClone(document);
    const create = scratch.paths['/api/v1/containers'].post.requestBody.content['application/json'].schema;
    create.properties.volumes = { default: [], type: 'array', items: { type: 'string' } };

    // Act
    const fields = bodyFieldsOf(containerRequestSchemasOf(scratch).create);

    // Assess
    expect(fieldAt(fields, 'volumes')).toMatchObject({ label: 'Volumes', kind: 'list', default: [] });
  });
});

describe('labelOf', () => {
  it.each([
    ['memory_mb', 'Memory (MB)'],
    ['cpu_cores', 'CPU cores'],
    ['disk_gb', 'Disk (GB)'],
    ['restart_policy', 'Restart policy'],
    ['env', 'Environment variables'],
    ['grace_s', 'Grace (s)'],
    ['s', 'S'],
  ])('writes %s as %s', (name, label) => {
    expect(labelOf(name)).toBe(label);
  });
});

describe('valueFromText', () => {
  const [port, cpu, image] = ['port', 'cpu_cores', 'image'].map(
    (path) => fieldAt(bodyFieldsOf(containerRequestSchemasOf(document).create), path)!,
  );

  it('gives numbers and numeric choices their JSON type, and leaves what is not a number for the API to name', () => {
    expect(valueFromText(port!, ' 3000 ')).toBe(3000);
    expect(valueFromText(port!, 'abc')).toBe('abc');
    expect(valueFromText(cpu!, '2')).toBe(2);
    expect(valueFromText(image!, '007')).toBe('007');
  });
});
