import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { addFieldOptions, bodyFromOptions, fieldRows, flagNames, problemsText } from '../../../cli/src/fields.js';
import { WORKLOAD, WORKLOAD_KEYS } from '../../../lib/containers/workload.js';
import { bodyFieldsOf, containerRequestSchemasOf } from '../../../lib/http/openapi-fields.js';

const document = JSON.parse(readFileSync(new URL('../../../docs/openapi.json', import.meta.url), 'utf8'));
const { create, update } = containerRequestSchemasOf(document);
const CREATE = bodyFieldsOf(create);
const UPDATE = bodyFieldsOf(update);

/** Parses a command line with the field flags, as `create` would. */
function parsed(fields: typeof CREATE, args: string[]): Record<string, unknown> {
  const command = addFieldOptions(new Command('create').exitOverride().argument('<hostname>'), fields, ['hostname', 'command']);
  command.parse(['x', ...args], { from: 'user' });
  return command.opts();
}

describe('the CLI field flags', () => {
  it('derives a flag from each field of the OpenAPI document, its unit left out', () => {
    const flags = flagNames(CREATE);
    // A flag for every field that takes a value of its own: each workload field the declaration
    // lists (a group's by its own fields), the hostname and the registry credentials' two.
    for (const key of WORKLOAD_KEYS) {
      const name = WORKLOAD[key].name;
      expect(
        [...flags.keys()].some((path) => path === name || path.startsWith(`${name}.`)),
        name,
      ).toBe(true);
    }
    expect(new Set(flags.values()).size).toBe(flags.size);
    expect(Object.fromEntries(flags)).toMatchObject({
      hostname: 'hostname',
      cpu_cores: 'cpu',
      memory_mb: 'memory',
      disk_gb: 'disk',
      'health_check.path': 'health-check-path',
      'health_check.interval_s': 'health-check-interval',
      restart_policy: 'restart-policy',
      idle_timeout_s: 'idle-timeout',
      mounts: 'mount',
      'registry_credentials.username': 'registry-credentials-username',
    });
  });

  it('takes a list of records as a repeatable flag, one record a flag (--mount VOLUME:/path), and prints it back the same way', () => {
    const volume = '0190f1c2-0000-7000-8000-000000000003';
    const options = parsed(CREATE, ['--mount', `${volume}:/data`, '--mount', `${volume}:/srv/cache`]);
    const body = bodyFromOptions(CREATE, options);
    expect(body.mounts).toEqual([
      { volume, path: '/data' },
      { volume, path: '/srv/cache' },
    ]);
    expect(fieldRows(CREATE, { mounts: body.mounts }).find(([name]) => name === 'mounts')).toEqual([
      'mounts',
      `${volume}:/data ${volume}:/srv/cache`,
    ]);
    // `--mount none` on update empties the list.
    expect(bodyFromOptions(UPDATE, parsed(UPDATE, ['--mount', 'none'])).mounts).toEqual([]);
  });

  it('makes the create body from the flags given, each value in its JSON type', () => {
    const options = parsed(CREATE, ['--cpu', '2', '--memory', '4096', '--env', 'A=1', '--env', 'B=x=y', '--health-check-path', '/up']);

    expect(bodyFromOptions(CREATE, options)).toEqual({
      cpu_cores: 2,
      memory_mb: 4096,
      env: { A: '1', B: 'x=y' },
      health_check: { path: '/up' },
    });
  });

  it('takes --idle-timeout as seconds, and "never" as null (never sleeps)', () => {
    expect(bodyFromOptions(UPDATE, parsed(UPDATE, ['--idle-timeout', '300']))).toEqual({ idle_timeout_s: 300 });
    expect(bodyFromOptions(UPDATE, parsed(UPDATE, ['--idle-timeout', 'never']))).toEqual({ idle_timeout_s: null });
    expect(() => parsed(UPDATE, ['--idle-timeout', 'soon'])).toThrow(/--idle-timeout must be a number/);
  });

  it("lays a group's flags over the record's group on update", () => {
    const options = parsed(UPDATE, ['--health-check-interval', '5']);
    const current = { health_check: { path: '/up', interval_s: 10, timeout_s: 2, grace_s: 60 } };

    expect(bodyFromOptions(UPDATE, options, current)).toEqual({ health_check: { path: '/up', interval_s: 5, timeout_s: 2, grace_s: 60 } });
  });

  it('refuses a number flag that is no number, and a choice that is not one, as usage errors', () => {
    expect(() => parsed(CREATE, ['--memory', 'lots'])).toThrow('--memory must be a number');
    expect(() => parsed(CREATE, ['--cpu', '3'])).toThrow(/Allowed choices are 1, 2, 4, 8, 16/);
  });

  it('names a field problem by its flag, and an argument by its name', () => {
    const text = problemsText(
      [
        { field: 'memory_mb', message: 'must be at least 512' },
        { field: 'hostname', message: 'is taken' },
        { field: 'health_check.path', message: 'must start with /' },
      ],
      CREATE,
      ['hostname', 'command'],
    );

    expect(text).toBe('--memory: must be at least 512; hostname: is taken; --health-check-path: must start with /');
  });

  it('gives a field added to the document a flag and a line of get with no other edit (a scratch field)', () => {
    // Prepare: a field as lib would declare it, written into the document by npm run openapi.
    const scratch = structuredClone(update);
    scratch.properties!.volumes = { type: 'array', items: { type: 'string' } };
    const fields = bodyFieldsOf(scratch);

    // Act
    const options = parsed(fields, ['--volumes', 'data:/data', '--volumes', 'logs:/logs']);

    // Assess
    expect(bodyFromOptions(fields, options)).toEqual({ volumes: ['data:/data', 'logs:/logs'] });
    expect(fieldRows(fields, { volumes: ['data:/data'] })).toContainEqual(['volumes', 'data:/data']);
  });
});
