import { Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/**
 * The name of the deployed service: the top-level stack's name, also from inside a nested stack
 * (whose own name CloudFormation generates). Functions report it as their metrics' Service
 * dimension and the API is named after it, so alarms and dashboards must use this one.
 */
export function serviceNameOf(scope: IConstruct): string {
  let stack = Stack.of(scope);
  while (stack.nestedStackParent) stack = stack.nestedStackParent;
  return stack.stackName;
}
