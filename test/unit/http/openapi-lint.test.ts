import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { routes } from '../../../lib/http/routes.js';
import { buildOpenApiJson } from '../../../scripts/openapi-build.js';

const REDOCLY = resolve('node_modules/@redocly/cli/bin/cli.js');

interface LintProblem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
}

/**
 * What a CLI or SDK author's first tool says of the document: Redocly CLI's built-in
 * `recommended` rules (servers, licence, a 2xx and a 4xx answer on every operation, no unused
 * component), run offline with telemetry off. The one exception, in Redocly's own ignore file:
 * the operations that only ever redirect a browser (their route's `answers`) have no 2xx answer.
 */
function ignoreFileForRedirects(): string {
  const pointer = (path: string) => path.replace('+}', '}').replaceAll('~', '~0').replaceAll('/', '~1');
  const onlyRedirects = routes.filter((route) => {
    const declared = route.answers;
    return 'redirects' in declared && !('html' in declared);
  });
  const lines = onlyRedirects.map((route) => `    - '#/paths/${pointer(route.path)}/${route.method.toLowerCase()}/responses'`);
  return `openapi.json:\n  operation-2xx-response:\n${lines.join('\n')}\n`;
}

describe('the OpenAPI document under Redocly lint', { timeout: 60_000 }, () => {
  it('passes the recommended rules with no error and no warning', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'openapi-lint-'));
    try {
      const file = join(directory, 'openapi.json');
      await writeFile(file, await buildOpenApiJson());
      await writeFile(join(directory, '.redocly.lint-ignore.yaml'), ignoreFileForRedirects());
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [REDOCLY, 'lint', 'openapi.json', '--extends', 'recommended', '--format', 'json'],
        { cwd: directory, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' } },
      ).catch((failure: { stdout: string }) => ({ stdout: failure.stdout }));
      const report = JSON.parse(stdout.slice(stdout.indexOf('{'))) as { problems: LintProblem[] };
      expect(report.problems.map(({ ruleId, severity, message }) => `${severity} ${ruleId}: ${message}`)).toEqual([]);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
