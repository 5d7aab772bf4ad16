import type { Template } from 'aws-cdk-lib/assertions';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/build-app.js';
import { eventFunctions } from '../../infra/event-functions.js';
import { routes as routeTable, type Route } from '../../lib/http/routes.js';
import { propertiesOfOnly, resourcesOfType, wholeTemplate } from './template-queries.js';

// A few rows keep bundling short; the full table is synthesized in container-hosting-stack.test.ts.
const someRoutes: readonly Route[] = (routeTable as readonly Route[]).filter((route) =>
  ['authorizationServerMetadata', 'createContainer'].includes(route.id),
);
const outdir = mkdtempSync(join(tmpdir(), 'infra-domain-test-'));
const certificateArn = 'arn:aws:acm:eu-west-1:111122223333:certificate/0a1b2c3d-1111-2222-3333-444455556666';

const templateWith = (context: Record<string, string> = {}): Template =>
  wholeTemplate(buildApp({ outdir, context, routes: someRoutes, nagChecks: false }).stack);

describe('API custom domain (context apiDomain + apiCertificateArn)', () => {
  it('maps the domain to the stage with an empty base path, so the API and its RFC 8414 metadata sit at the root', () => {
    // Act
    const template = templateWith({ apiDomain: 'api.example.com', apiCertificateArn: certificateArn });
    // Assess
    const domain = propertiesOfOnly(template, 'AWS::ApiGateway::DomainName');
    expect(domain).toMatchObject({
      DomainName: 'api.example.com',
      RegionalCertificateArn: certificateArn,
      EndpointConfiguration: { Types: ['REGIONAL'] },
      SecurityPolicy: 'TLS_1_2',
    });
    const mapping = propertiesOfOnly(template, 'AWS::ApiGateway::BasePathMapping');
    expect(mapping.BasePath ?? '').toBe('');
    expect(mapping.Stage).toBeDefined();
    const [, stage] = resourcesOfType(template, 'AWS::ApiGateway::Stage')[0]!;
    expect(stage.Properties?.StageName).toBe('prod');
    // The issuer is the domain's root whichever host a request used.
    for (const [, fn] of resourcesOfType(template, 'AWS::Lambda::Function')) {
      expect(fn.Properties?.Environment?.Variables?.PUBLIC_BASE_URL).toBe('https://api.example.com');
    }
    expect(Object.keys(template.toJSON().Outputs)).toEqual(expect.arrayContaining(['ApiDomainUrl', 'ApiDomainTarget']));
  });

  it('keeps an explicit publicBaseUrl as the issuer', () => {
    // Act
    const template = templateWith({
      apiDomain: 'api.example.com',
      apiCertificateArn: certificateArn,
      publicBaseUrl: 'https://auth.example.com',
    });
    // Assess
    for (const [, fn] of resourcesOfType(template, 'AWS::Lambda::Function')) {
      expect(fn.Properties?.Environment?.Variables?.PUBLIC_BASE_URL).toBe('https://auth.example.com');
    }
  });

  it('has no custom domain without the context, and then sets no PUBLIC_BASE_URL: the address is the record API Gateway keeps of its own domain and stage', () => {
    // The REST API lives in a nested stack whose methods depend on every function, so its id
    // cannot reach the functions' environment (a cycle). Without the variable the functions
    // take requestContext.domainName and the stage, which API Gateway writes, not the client
    // (lib/http/public-base-url.ts).
    // Act
    const template = templateWith();
    // Assess
    expect(resourcesOfType(template, 'AWS::ApiGateway::DomainName')).toEqual([]);
    expect(resourcesOfType(template, 'AWS::ApiGateway::BasePathMapping')).toEqual([]);
    const functions = resourcesOfType(template, 'AWS::Lambda::Function');
    expect(functions.length).toBeGreaterThan(0);
    for (const [, fn] of functions) expect(fn.Properties?.Environment?.Variables?.PUBLIC_BASE_URL).toBeUndefined();
  });

  it('refuses a domain without its certificate, and a malformed certificate ARN', () => {
    // Act / Assess
    expect(() => templateWith({ apiDomain: 'api.example.com' })).toThrow(/apiDomain and apiCertificateArn go together/);
    expect(() => templateWith({ apiDomain: 'api.example.com', apiCertificateArn: 'not-an-arn' })).toThrow(/apiCertificateArn/);
  });
});

describe('API Gateway account logging role (context manageApiGatewayAccount)', () => {
  it('is managed by default: the stack sets the account-wide CloudWatch Logs role', () => {
    // Act
    const template = templateWith();
    // Assess
    const account = propertiesOfOnly(template, 'AWS::ApiGateway::Account');
    expect(account.CloudWatchRoleArn).toBeDefined();
  });

  it('with manageApiGatewayAccount=false leaves the account setting alone: no Account resource and no role for it', () => {
    // Act
    const template = templateWith({ manageApiGatewayAccount: 'false' });
    // Assess
    expect(resourcesOfType(template, 'AWS::ApiGateway::Account')).toEqual([]);
    const pushRoles = resourcesOfType(template, 'AWS::IAM::Role').filter(([, role]) =>
      JSON.stringify(role.Properties?.ManagedPolicyArns ?? []).includes('AmazonAPIGatewayPushToCloudWatchLogs'),
    );
    expect(pushRoles).toEqual([]);
    // Execution logging stays on; it uses the role the account already has.
    template.hasResourceProperties('AWS::ApiGateway::Stage', { MethodSettings: [{ LoggingLevel: 'ERROR' }] });
  });
});

describe('X-Ray tracing and JSON logs (context tracing, logLevel)', () => {
  it('traces every function and the API stage by default, and logs JSON at INFO', () => {
    // Act
    const template = templateWith();
    // Assess
    const functions = resourcesOfType(template, 'AWS::Lambda::Function');
    expect(functions.length).toBe(someRoutes.length + eventFunctions.length);
    for (const [, fn] of functions) {
      expect(fn.Properties?.TracingConfig).toEqual({ Mode: 'Active' });
      expect(fn.Properties?.LoggingConfig).toMatchObject({ LogFormat: 'JSON', ApplicationLogLevel: 'INFO' });
      expect(fn.Properties?.Environment?.Variables).toMatchObject({ LOG_LEVEL: 'INFO', POWERTOOLS_SERVICE_NAME: 'ContainerHosting' });
    }
    expect(propertiesOfOnly(template, 'AWS::ApiGateway::Stage').TracingEnabled).toBe(true);
  });

  it('with tracing=false traces neither the functions nor the stage, and grants no X-Ray writes', () => {
    // Act
    const template = templateWith({ tracing: 'false', logLevel: 'warn' });
    // Assess
    for (const [, fn] of resourcesOfType(template, 'AWS::Lambda::Function')) {
      expect(fn.Properties?.TracingConfig).toBeUndefined();
      expect(fn.Properties?.LoggingConfig).toMatchObject({ LogFormat: 'JSON', ApplicationLogLevel: 'WARN' });
      expect(fn.Properties?.Environment?.Variables?.LOG_LEVEL).toBe('WARN');
    }
    expect(propertiesOfOnly(template, 'AWS::ApiGateway::Stage').TracingEnabled).toBe(false);
    expect(JSON.stringify(template.toJSON())).not.toContain('xray:PutTraceSegments');
  });

  it('refuses an unknown log level', () => {
    // Act / Assess
    expect(() => templateWith({ logLevel: 'chatty' })).toThrow(/logLevel/);
  });
});

describe('cdk-nag with the domain, tracing and an unmanaged account role', () => {
  it('finds nothing unacknowledged', () => {
    // Prepare
    const context = { apiDomain: 'api.example.com', apiCertificateArn: certificateArn, manageApiGatewayAccount: 'false' };
    const { app } = buildApp({ outdir, context, routes: someRoutes });
    // Act / Assess: with the AWS Solutions plugin registered, any unacknowledged finding throws here.
    expect(() => app.synth()).not.toThrow();
  });
});
