import { NestedStack, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/build-app.js';

/**
 * CloudFormation refuses a template with more than 500 resources, 200 parameters or 200 outputs
 * (https://github.com/awsdocs/aws-cloudformation-user-guide/blob/main/doc_source/cloudformation-limits.md).
 * Each route adds a function, a role and a policy to the routes' nested stack, with two outputs (its
 * ARN for the API's invoke permission, its name for the alarms), and a method and an invoke
 * permission to the API's. 300 leaves each template room for the next issues' routes.
 */
const RESOURCES_PER_TEMPLATE = 300;
const PARAMETERS_PER_TEMPLATE = 200;
const OUTPUTS_PER_TEMPLATE = 200;

const outdir = mkdtempSync(join(tmpdir(), 'infra-budget-test-'));
const certificateArn = 'arn:aws:acm:us-east-1:111122223333:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789';

let templates: Array<{
  name: string;
  resources: Record<string, { Type: string }>;
  parameters: Record<string, unknown>;
  outputs: Record<string, unknown>;
}>;

function stacksUnder(stack: Stack): Stack[] {
  const nested = stack.node.findAll().filter((construct): construct is NestedStack => NestedStack.isNestedStack(construct));
  return [stack, ...nested];
}

beforeAll(() => {
  // Prepare: the whole route table with every optional part on (routing, API domain).
  const { stack } = buildApp({
    outdir,
    nagChecks: false,
    context: {
      // Bundles change no resource, parameter or output; the bundles are measured in bundle-size.test.ts.
      'aws:cdk:bundling-stacks': [],
      appsDomain: 'apps.example.com',
      appsCertificateArn: certificateArn,
      apiDomain: 'api.example.net',
      apiCertificateArn: certificateArn,
    },
  });
  // Act
  templates = stacksUnder(stack).map((each) => {
    const template = Template.fromStack(each).toJSON();
    return { name: each.node.path, resources: template.Resources, parameters: template.Parameters ?? {}, outputs: template.Outputs ?? {} };
  });
  const counts = templates.map(({ name, resources }) => {
    const byType = new Map<string, number>();
    for (const { Type } of Object.values(resources)) byType.set(Type, (byType.get(Type) ?? 0) + 1);
    const lines = [...byType].sort((a, b) => b[1] - a[1]).map(([type, count]) => `  ${String(count).padStart(4)} ${type}`);
    return `${name}: ${Object.keys(resources).length} resources\n${lines.join('\n')}`;
  });
  console.log(`Resources per template (routing and API domain on)\n${counts.join('\n')}`);
}, 300_000);

describe('CloudFormation resource budget', () => {
  it(`keeps every template of the full stack, routing on, within ${RESOURCES_PER_TEMPLATE} resources`, () => {
    // Assess
    expect(templates.length).toBeGreaterThan(1);
    for (const { name, resources } of templates) expect(Object.keys(resources).length, name).toBeLessThanOrEqual(RESOURCES_PER_TEMPLATE);
  });

  it(`keeps every template within CloudFormation's ${PARAMETERS_PER_TEMPLATE} parameters and ${OUTPUTS_PER_TEMPLATE} outputs`, () => {
    // Assess: the nested stacks pass the route functions to the API's and the alarms' templates as outputs and parameters.
    for (const { name, parameters, outputs } of templates) {
      expect(Object.keys(parameters).length, `${name} parameters`).toBeLessThanOrEqual(PARAMETERS_PER_TEMPLATE);
      expect(Object.keys(outputs).length, `${name} outputs`).toBeLessThanOrEqual(OUTPUTS_PER_TEMPLATE);
    }
  });

  it('keeps one log group for all functions and at most one alarm per ten functions and metric', () => {
    // Prepare
    const all = templates.flatMap(({ resources }) => Object.values(resources));
    const count = (type: string) => all.filter((resource) => resource.Type === type).length;
    // Assess
    const functions = count('AWS::Lambda::Function');
    // One for every function; the others are the stack's other parts' own, CodeBuild's build logs (issue 33) the sixth,
    // the du sidecars' own group (issue 34, docs/volumes.md "Volumes on AWS") the seventh.
    expect(count('AWS::Logs::LogGroup')).toBeLessThanOrEqual(7);
    // Errors and throttles per ten functions, and the single alarms: 5, and with routing the route changes queue's age and the refused wake holds.
    expect(count('AWS::CloudWatch::Alarm')).toBeLessThanOrEqual(2 * Math.ceil(functions / 10) + 7);
  });
});
