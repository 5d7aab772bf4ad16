import { Names, Stack, Tokenization, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** Acknowledges one cdk-nag finding on a construct and everything under it; the reason is required. */
export function acknowledgeNagRule(scope: IConstruct, ruleId: string, reason: string): void {
  Validations.of(scope).acknowledge({ id: ruleId, reason });
}

/**
 * Acknowledges AwsSolutions-IAM5 for one wildcard resource. cdk-nag v3 names each finding
 * `AwsSolutions-IAM5[Resource::<flattened ARN>]`, with references rendered as `<LogicalId>`,
 * so the ARN is resolved and flattened the same way here. In a nested stack a reference to the
 * parent's resource is a parameter CDK adds (`referenceto<unique id><attribute>`), and the
 * finding names that parameter.
 */
export function acknowledgeWildcardResource(scope: IConstruct, resourceArn: string, reason: string): void {
  const stack = Stack.of(scope);
  const flattened = flattenReference(stack.resolve(resourceArn), parametersForOtherStacks(stack, resourceArn));
  acknowledgeNagRule(scope, `AwsSolutions-IAM5[Resource::${flattened}]`, reason);
}

/** The references in a string to another stack's resources, each resolved, with the parameter that stands for it in `stack`. */
function parametersForOtherStacks(stack: Stack, value: string): Map<string, string> {
  const parameters = new Map<string, string>();
  for (const token of Tokenization.reverseString(value).tokens) {
    const reference = token as Partial<{ target: IConstruct; displayName: string }>;
    if (!reference.target || !reference.displayName || Stack.of(reference.target) === stack) continue;
    const parameter = `referenceto${Names.nodeUniqueId(reference.target.node)}${reference.displayName}`.replace(/[^A-Za-z0-9]/g, '');
    parameters.set(JSON.stringify(stack.resolve(token)), parameter);
  }
  return parameters;
}

function flattenReference(node: unknown, parameters: ReadonlyMap<string, string> = new Map()): string {
  if (node === undefined) return '';
  const parameter = parameters.get(JSON.stringify(node));
  if (parameter !== undefined) return `<${parameter}>`;
  if (typeof node === 'string') return node.replace(/\$\{/g, '<').replace(/\}/g, '>');
  if (typeof node === 'object' && node !== null) {
    const intrinsic = node as Record<string, unknown>;
    if (Array.isArray(intrinsic['Fn::Join'])) {
      const [delimiter, parts] = intrinsic['Fn::Join'] as [string, unknown[]];
      return parts.map((part) => flattenReference(part, parameters)).join(delimiter);
    }
    if (intrinsic['Fn::Sub'] !== undefined) return flattenReference(intrinsic['Fn::Sub'], parameters);
    if (Array.isArray(intrinsic['Fn::GetAtt'])) {
      const [resource, attribute] = intrinsic['Fn::GetAtt'] as [unknown, unknown];
      return `<${flattenReference(resource)}.${flattenReference(attribute)}>`;
    }
    if (intrinsic['Ref'] !== undefined) return `<${flattenReference(intrinsic['Ref'])}>`;
  }
  return JSON.stringify(node);
}
