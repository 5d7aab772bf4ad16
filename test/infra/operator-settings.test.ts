import { App } from 'aws-cdk-lib';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/build-app.js';
import { readSettings, SETTING_KEYS } from '../../infra/settings.js';
import { routes as routeTable, type Route } from '../../lib/http/routes.js';
import { resourcesOfType, wholeTemplate } from './template-queries.js';

const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));
const tsxCli = fileURLToPath(new URL('../../node_modules/tsx/dist/cli.mjs', import.meta.url));
// A few rows keep bundling short; the full table is synthesized in container-hosting-stack.test.ts.
const someRoutes: readonly Route[] = (routeTable as readonly Route[]).filter((route) => ['getMe', 'createSession'].includes(route.id));
const outdir = mkdtempSync(join(tmpdir(), 'infra-operator-settings-'));

/** infra/app.ts as `cdk synth` runs it: the CLI hands the app its context in CDK_CONTEXT_JSON. */
function synthWithContext(context: Record<string, unknown>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [tsxCli, 'infra/app.ts'], {
    cwd: repositoryRoot,
    env: { ...process.env, CDK_CONTEXT_JSON: JSON.stringify(context), CDK_OUTDIR: mkdtempSync(join(tmpdir(), 'synth-out-')) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

describe('synth with a setting the operator got wrong', () => {
  it('refuses -c appDomain=… with one line naming the nearest settings and every valid key', async () => {
    const result = await synthWithContext({ appDomain: 'apps.example.com', '@aws-cdk/core:checkSecretUsage': true });

    expect(result.code).toBe(1);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^Unknown CDK context key appDomain \(did you mean apiDomain or appsDomain\?\); the settings are: stackName, /,
    );
    for (const key of SETTING_KEYS) expect(lines[0]).toContain(key);
  }, 60_000);

  it('refuses a bad value with one line and no stack trace', async () => {
    const result = await synthWithContext({ natGateways: 'three' });

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^Invalid CDK context: natGateways: [^\n]+\n$/);
    expect(result.stderr).not.toMatch(/\bat .+:\d+:\d+/);
  }, 60_000);

  it("takes the CDK's own keys (feature flags, the CLI's, cached lookups) as they are", () => {
    const settings = readSettings(
      new App({
        context: {
          '@aws-cdk/aws-iam:minimizePolicies': true,
          'aws:cdk:enable-path-metadata': true,
          'availability-zones:account=111122223333:region=eu-west-1': ['eu-west-1a'],
        },
      }).node,
    );
    expect(settings.stackName).toBe('ContainerHosting');
  });
});

describe('the stack pointed at a table restored from point-in-time recovery (-c tableName=…)', () => {
  it('creates no table, and the functions read and write the named one, its indexes included', () => {
    // Act
    const template = wholeTemplate(
      buildApp({ outdir, context: { tableName: 'ContainerHosting-restored-0607' }, routes: someRoutes, nagChecks: false }).stack,
    );
    // Assess
    expect(resourcesOfType(template, 'AWS::DynamoDB::Table')).toHaveLength(0);
    const json = JSON.stringify(template.toJSON());
    const environments = resourcesOfType(template, 'AWS::Lambda::Function').map(([, fn]) => fn.Properties?.Environment?.Variables ?? {});
    const withTable = environments.filter((variables) => 'TABLE_NAME' in variables);
    expect(withTable.length).toBeGreaterThan(0);
    for (const variables of withTable) expect(variables.TABLE_NAME).toBe('ContainerHosting-restored-0607');
    expect(json).toContain(':table/ContainerHosting-restored-0607"');
    expect(json).toContain(':table/ContainerHosting-restored-0607/index/gsi1"');
    expect(template.toJSON().Outputs.TableName.Value).toBe('ContainerHosting-restored-0607');
  });

  it('refuses a name DynamoDB would not take', () => {
    expect(() => readSettings(new App({ context: { tableName: 'a b' } }).node)).toThrow(
      /^Invalid CDK context: tableName: must be a DynamoDB table name/,
    );
  });
});

describe('the console URL output', () => {
  it("is the stage's URL plus /console, or the public address's", () => {
    const plain = wholeTemplate(buildApp({ outdir, routes: someRoutes, nagChecks: false }).stack).toJSON().Outputs.ConsoleUrl;
    expect(JSON.stringify(plain.Value)).toMatch(/console"\]\]\}$/);
    const withPublic = wholeTemplate(
      buildApp({ outdir, context: { publicBaseUrl: 'https://hosting.example.com/' }, routes: someRoutes, nagChecks: false }).stack,
    ).toJSON().Outputs.ConsoleUrl;
    expect(withPublic.Value).toBe('https://hosting.example.com/console');
  });
});
