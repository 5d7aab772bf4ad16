import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { WORKLOAD, WORKLOAD_KEYS } from '../../lib/containers/workload.js';
import { buildFieldsDoc, FIELDS_DOC_PATH } from '../../scripts/fields-doc-build.js';

describe('docs/fields.md', () => {
  it('is committed as generated from the workload declaration (run npm run fields-doc after changing a field)', async () => {
    expect(await readFile(FIELDS_DOC_PATH, 'utf8')).toBe(await buildFieldsDoc());
  });

  it('has a row for every workload field, in the declaration order, with its default and when a change applies', async () => {
    const rows = (await buildFieldsDoc()).split('\n').filter((line) => /^\| `[a-z_]+` \|/.test(line));
    expect(rows.map((row) => /^\| `([a-z_]+)`/.exec(row)![1])).toEqual(WORKLOAD_KEYS.map((key) => WORKLOAD[key].name));
    expect(rows.find((row) => row.startsWith('| `restart_policy`'))).toMatch(/\| `on-failure` \| at once \|$/);
    expect(rows.find((row) => row.startsWith('| `memory_mb`'))).toMatch(/at least 512 \| `512` \| at the next start or restart \|$/);
  });
});
