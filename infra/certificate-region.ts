import { SettingsError } from './settings-error.js';
import { Aws, CfnRule, Fn, type Stack, Token } from 'aws-cdk-lib';

/** The certificates a deployment names, by their context setting. */
export type CertificateSettings = Partial<Record<'apiCertificateArn' | 'appsCertificateArn', string>>;

/** The Region an ACM certificate ARN names: `arn:<partition>:acm:<region>:<account>:certificate/<id>`. */
export function regionOfCertificate(certificateArn: string): string {
  const region = certificateArn.split(':')[3];
  if (!region) throw new SettingsError(`Invalid CDK context: ${certificateArn} is not an ACM certificate ARN`);
  return region;
}

/**
 * A regional API domain and an Application Load Balancer take only a certificate of their own
 * Region, so a certificate of another Region fails the deploy half way, at the resource that uses
 * it. Where the stack's Region is known at synth (its env, or the Region the CDK CLI deploys to,
 * CDK_DEFAULT_REGION), a certificate elsewhere fails synth with the settings named. An
 * environment-agnostic template also carries a CloudFormation rule, which CloudFormation checks
 * before it creates or updates any resource
 * (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/rules-section-structure.html).
 */
export function requireCertificatesInStackRegion(stack: Stack, certificates: CertificateSettings, deploymentRegion?: string): void {
  const named = Object.entries(certificates).flatMap(([setting, arn]) => (arn ? [{ setting, region: regionOfCertificate(arn) }] : []));
  if (named.length === 0) return;
  const regions = new Set(named.map(({ region }) => region));
  if (regions.size > 1) {
    const list = named.map(({ setting, region }) => `${setting} is in ${region}`).join(', ');
    throw new SettingsError(`Invalid CDK context: ${list}; both must be in the stack's Region`);
  }
  const stackRegion = Token.isUnresolved(stack.region) ? deploymentRegion : stack.region;
  const certificateRegion = named[0]!.region;
  if (stackRegion && stackRegion !== certificateRegion) {
    const list = named.map(({ setting }) => setting).join(' and ');
    throw new SettingsError(
      `Invalid CDK context: ${list} ${named.length > 1 ? 'are' : 'is'} in ${certificateRegion}, but the stack deploys to ${stackRegion}; request or import the certificate in ${stackRegion} (ACM certificates are regional)`,
    );
  }
  if (Token.isUnresolved(stack.region)) {
    new CfnRule(stack, 'CertificatesInStackRegion', {
      assertions: [
        {
          assert: Fn.conditionEquals(Aws.REGION, certificateRegion),
          assertDescription: `The certificates (${named.map(({ setting }) => setting).join(', ')}) are in ${certificateRegion}: deploy this stack to ${certificateRegion}, or use certificates of the stack's Region`,
        },
      ],
    });
  }
}
