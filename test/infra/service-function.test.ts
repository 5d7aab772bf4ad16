import { App, Duration, Stack, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { ServiceFunction } from '../../infra/constructs/service-function.js';
import { actionsOf, resource, statementsOfRole } from './template-queries.js';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

let template: Template;
let bundleDirectory: string;
let serviceFunction: ServiceFunction;
let stack: Stack;

beforeAll(() => {
  // Prepare
  const app = new App();
  stack = new Stack(app, 'ServiceFunctionTest');
  serviceFunction = new ServiceFunction(stack, 'architecture', {
    entry: 'architecture-handler.ts',
    sourceRoot: fixtures,
    tableName: 'test-table',
    environment: { EXTRA: 'yes' },
  });
  new ServiceFunction(stack, 'slow', {
    entry: 'architecture-handler.ts',
    sourceRoot: fixtures,
    tableName: 'test-table',
    timeout: Duration.seconds(29),
  });
  // Act
  const assembly = app.synth();
  template = Template.fromStack(stack);
  const [asset] = readdirSync(assembly.directory).filter((name) => name.startsWith('asset.'));
  bundleDirectory = join(assembly.directory, asset ?? 'missing');
});

describe('ServiceFunction', () => {
  it('runs Node.js 22 on arm64 with 512 MB, 10 seconds and source-mapped stack traces', () => {
    // Assess
    template.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      MemorySize: 512,
      Timeout: 10,
      Environment: { Variables: { NODE_OPTIONS: '--enable-source-maps', TABLE_NAME: 'test-table', EXTRA: 'yes' } },
    });
  });

  it('takes a longer timeout when asked', () => {
    // Assess
    template.hasResourceProperties('AWS::Lambda::Function', { Timeout: 29 });
  });

  it('logs to its own log group kept for a month', () => {
    // Prepare
    const functionId = stack.getLogicalId(serviceFunction.function.node.defaultChild as CfnElement);
    // Act
    const logGroupId = resource(template, functionId).Properties?.LoggingConfig?.LogGroup?.Ref;
    // Assess
    expect(resource(template, logGroupId).Properties?.RetentionInDays).toBe(30);
  });

  it('starts with a role that may only write its own logs and X-Ray traces, without managed policies', () => {
    // Prepare
    const roleId = stack.getLogicalId(serviceFunction.role.node.defaultChild as CfnElement);
    // Act
    const statements = statementsOfRole(template, roleId);
    // Assess
    expect(resource(template, roleId).Properties?.ManagedPolicyArns).toBeUndefined();
    expect(actionsOf(statements).sort()).toEqual([
      'logs:CreateLogStream',
      'logs:PutLogEvents',
      'xray:PutTelemetryRecords',
      'xray:PutTraceSegments',
    ]);
    const logStatement = statements.find((statement) => actionsOf([statement]).includes('logs:PutLogEvents'));
    expect(logStatement?.Resource).not.toBe('*');
  });

  it('ships a minified ESM bundle with a linked source map', () => {
    // Act
    const code = readFileSync(join(bundleDirectory, 'index.mjs'), 'utf8');
    // Assess
    expect(code.startsWith("import { createRequire as createRequireForBundle } from 'node:module'")).toBe(true);
    expect(code.trimEnd().endsWith('//# sourceMappingURL=index.mjs.map')).toBe(true);
    expect(existsSync(join(bundleDirectory, 'index.mjs.map'))).toBe(true);
  });

  it('loads in Node as ESM even when a CommonJS dependency requires a built-in', () => {
    // Prepare
    const bundle = pathToFileURL(join(bundleDirectory, 'index.mjs')).href;
    const script = `const { handler } = await import(${JSON.stringify(bundle)}); console.log(JSON.stringify(await handler()));`;
    // Act
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    // Assess
    expect(JSON.parse(output)).toEqual({ architecture: process.arch });
  });
});
