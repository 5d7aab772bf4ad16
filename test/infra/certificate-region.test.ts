import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/build-app.js';
import { requireCertificatesInStackRegion } from '../../infra/certificate-region.js';

const certificateIn = (region: string) => `arn:aws:acm:${region}:111122223333:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789`;

describe('requireCertificatesInStackRegion', () => {
  it('fails synth, naming the setting and both Regions, when a certificate is not in the Region the stack deploys to', () => {
    // Prepare
    const agnostic = new Stack(new App(), 'Agnostic');
    const pinned = new Stack(new App(), 'Pinned', { env: { region: 'eu-west-1' } });
    // Act / Assess
    expect(() => requireCertificatesInStackRegion(agnostic, { appsCertificateArn: certificateIn('us-east-1') }, 'eu-west-1')).toThrow(
      'Invalid CDK context: appsCertificateArn is in us-east-1, but the stack deploys to eu-west-1; request or import the certificate in eu-west-1 (ACM certificates are regional)',
    );
    expect(() => requireCertificatesInStackRegion(pinned, { apiCertificateArn: certificateIn('us-east-1') })).toThrow(
      /apiCertificateArn is in us-east-1, but the stack deploys to eu-west-1/,
    );
  });

  it('fails synth when the two certificates are in different Regions', () => {
    // Prepare
    const stack = new Stack(new App(), 'Agnostic');
    // Act / Assess
    expect(() =>
      requireCertificatesInStackRegion(stack, {
        apiCertificateArn: certificateIn('eu-west-1'),
        appsCertificateArn: certificateIn('us-east-1'),
      }),
    ).toThrow(
      "Invalid CDK context: apiCertificateArn is in eu-west-1, appsCertificateArn is in us-east-1; both must be in the stack's Region",
    );
  });

  it('makes CloudFormation refuse, before creating anything, a template deployed to another Region than its certificates', () => {
    // Prepare: nothing tells synth where the stack goes.
    const stack = new Stack(new App(), 'Agnostic');
    // Act
    requireCertificatesInStackRegion(stack, { appsCertificateArn: certificateIn('eu-west-1') });
    // Assess
    const rules = Template.fromStack(stack).toJSON().Rules;
    expect(rules.CertificatesInStackRegion).toEqual({
      Assertions: [
        {
          Assert: { 'Fn::Equals': [{ Ref: 'AWS::Region' }, 'eu-west-1'] },
          AssertDescription:
            "The certificates (appsCertificateArn) are in eu-west-1: deploy this stack to eu-west-1, or use certificates of the stack's Region",
        },
      ],
    });
  });

  it('accepts certificates of the stack’s Region, and a deployment without any', () => {
    // Act / Assess
    expect(() =>
      requireCertificatesInStackRegion(new Stack(new App(), 'Same'), { appsCertificateArn: certificateIn('eu-west-1') }, 'eu-west-1'),
    ).not.toThrow();
    const without = new Stack(new App(), 'Without');
    requireCertificatesInStackRegion(without, {});
    expect(Template.fromStack(without).toJSON().Rules?.CertificatesInStackRegion).toBeUndefined();
  });
});

describe('the stack', () => {
  it('checks its certificates against the Region the CDK CLI deploys to, before building anything', () => {
    // Act / Assess
    expect(() =>
      buildApp({
        nagChecks: false,
        deploymentRegion: 'eu-west-1',
        context: { 'aws:cdk:bundling-stacks': [], appsDomain: 'apps.example.com', appsCertificateArn: certificateIn('us-east-1') },
      }),
    ).toThrow(/appsCertificateArn is in us-east-1, but the stack deploys to eu-west-1/);
  });
});
