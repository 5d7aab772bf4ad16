import { Stack, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** Acknowledges one cdk-nag finding on a construct and everything under it; the reason is required. */
export function acknowledgeNagRule(scope: IConstruct, ruleId: string, reason: string): void {
  Validations.of(scope).acknowledge({ id: ruleId, reason });
}

/**
 * Acknowledges AwsSolutions-IAM5 for one wildcard resource. cdk-nag v3 names each finding
 * `AwsSolutions-IAM5[Resource::<flattened ARN>]`, with references rendered as `<LogicalId>`,
 * so the ARN is resolved and flattened the same way here.
 */
export function acknowledgeWildcardResource(scope: IConstruct, resourceArn: string, reason: string): void {
  const flattened = flattenReference(Stack.of(scope).resolve(resourceArn));
  acknowledgeNagRule(scope, `AwsSolutions-IAM5[Resource::${flattened}]`, reason);
}

function flattenReference(node: unknown): string {
  if (node === undefined) return '';
  if (typeof node === 'string') return node.replace(/\$\{/g, '<').replace(/\}/g, '>');
  if (typeof node === 'object' && node !== null) {
    const intrinsic = node as Record<string, unknown>;
    if (Array.isArray(intrinsic['Fn::Join'])) {
      const [delimiter, parts] = intrinsic['Fn::Join'] as [string, unknown[]];
      return parts.map(flattenReference).join(delimiter);
    }
    if (intrinsic['Fn::Sub'] !== undefined) return flattenReference(intrinsic['Fn::Sub']);
    if (Array.isArray(intrinsic['Fn::GetAtt'])) {
      const [resource, attribute] = intrinsic['Fn::GetAtt'] as [unknown, unknown];
      return `<${flattenReference(resource)}.${flattenReference(attribute)}>`;
    }
    if (intrinsic['Ref'] !== undefined) return `<${flattenReference(intrinsic['Ref'])}>`;
  }
  return JSON.stringify(node);
}
