import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { buildOpenApiJson } from '../../../scripts/openapi-build.js';

const REDOCLY = resolve('node_modules/@redocly/cli/bin/cli.js');

interface LintProblem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
}

/**
 * What a CLI or SDK author's first tool says of the document: Redocly CLI's built-in
 * `recommended` rules (servers, licence, a 4xx answer on every operation, no unused component),
 * run offline with telemetry off.
 */
describe('the OpenAPI document under Redocly lint', { timeout: 60_000 }, () => {
  it('passes the recommended rules with no error and no warning', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'openapi-lint-'));
    try {
      const file = join(directory, 'openapi.json');
      await writeFile(file, await buildOpenApiJson());
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [REDOCLY, 'lint', file, '--extends', 'recommended', '--format', 'json'],
        { env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' } },
      ).catch((failure: { stdout: string }) => ({ stdout: failure.stdout }));
      const report = JSON.parse(stdout.slice(stdout.indexOf('{'))) as { problems: LintProblem[] };
      expect(report.problems.map(({ ruleId, severity, message }) => `${severity} ${ruleId}: ${message}`)).toEqual([]);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
