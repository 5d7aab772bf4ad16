import { NestedStack, type CfnElement, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';

/** Small readers over a synthesized template, for assertions that span several resources. */

export interface CfnResource {
  Type: string;
  Properties?: Record<string, any>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
}

export function resourcesOfType(template: Template, type: string): Array<[string, CfnResource]> {
  const resources = template.toJSON().Resources as Record<string, CfnResource>;
  return Object.entries(resources).filter(([, resource]) => resource.Type === type);
}

export function resource(template: Template, logicalId: string): CfnResource {
  const found = (template.toJSON().Resources as Record<string, CfnResource>)[logicalId];
  if (!found) throw new Error(`No resource ${logicalId}`);
  return found;
}

/** Maps each API Gateway resource (and the root) to its full path, e.g. `/api/v1/tokens/{token_id}`. */
export function apiResourcePaths(template: Template): Map<string, string> {
  const resources = new Map(resourcesOfType(template, 'AWS::ApiGateway::Resource'));
  const paths = new Map<string, string>();
  const pathOf = (logicalId: string): string => {
    const known = paths.get(logicalId);
    if (known !== undefined) return known;
    const apiResource = resources.get(logicalId);
    if (!apiResource) throw new Error(`No API resource ${logicalId}`);
    const parent = apiResource.Properties?.ParentId;
    const parentPath = parent?.Ref ? pathOf(parent.Ref) : '';
    const path = `${parentPath}/${apiResource.Properties?.PathPart}`;
    paths.set(logicalId, path);
    return path;
  };
  for (const logicalId of resources.keys()) pathOf(logicalId);
  return paths;
}

export interface ApiMethod {
  logicalId: string;
  httpMethod: string;
  path: string;
  properties: Record<string, any>;
}

export function apiMethods(template: Template): ApiMethod[] {
  const paths = apiResourcePaths(template);
  return resourcesOfType(template, 'AWS::ApiGateway::Method').map(([logicalId, method]) => {
    const resourceId = method.Properties?.ResourceId;
    const path = resourceId?.Ref ? (paths.get(resourceId.Ref) ?? '?') : '/';
    return { logicalId, httpMethod: method.Properties?.HttpMethod, path, properties: method.Properties ?? {} };
  });
}

export interface PolicyStatement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

/** Every statement of the inline policies attached to a role. */
export function statementsOfRole(template: Template, roleLogicalId: string): PolicyStatement[] {
  return resourcesOfType(template, 'AWS::IAM::Policy')
    .filter(([, policy]) => (policy.Properties?.Roles ?? []).some((role: any) => role?.Ref === roleLogicalId))
    .flatMap(([, policy]) => policy.Properties?.PolicyDocument?.Statement ?? []);
}

export function actionsOf(statements: readonly PolicyStatement[]): string[] {
  return statements.flatMap((statement) => (Array.isArray(statement.Action) ? statement.Action : [statement.Action]));
}

export function statementsWithAction(statements: readonly PolicyStatement[], action: string): PolicyStatement[] {
  return statements.filter((statement) => actionsOf([statement]).includes(action));
}

/** Renders an intrinsic as a readable string: `{ Ref: X }` → `<X>`, `Fn::GetAtt` → `<X.Attr>`. */
export function flatten(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(flatten).join(',');
  if (value && typeof value === 'object') {
    const intrinsic = value as Record<string, any>;
    if (intrinsic['Fn::Join']) return (intrinsic['Fn::Join'][1] as unknown[]).map(flatten).join(intrinsic['Fn::Join'][0]);
    if (intrinsic['Ref']) return `<${intrinsic['Ref']}>`;
    if (intrinsic['Fn::GetAtt']) return `<${intrinsic['Fn::GetAtt'].join('.')}>`;
  }
  return JSON.stringify(value);
}

/** The properties of the one resource of a type; fails when there is not exactly one. */
export function propertiesOfOnly(template: Template, type: string): Record<string, any> {
  const found = resourcesOfType(template, type);
  if (found.length !== 1) throw new Error(`Expected one ${type}, found ${found.length}`);
  return found[0]?.[1].Properties ?? {};
}

/**
 * The stack and its nested stacks read as one template: each nested stack's resources joined to
 * the parent's, a parameter the parent passes replaced by the value it passes, and a nested
 * output the parent reads replaced by the output's value. Assertions then do not depend on which
 * template a resource lives in (infra/stack.ts splits them to stay within CloudFormation's quota).
 */
export function wholeTemplate(stack: Stack): Template {
  const merged = JSON.parse(JSON.stringify(Template.fromStack(stack).toJSON()));
  const nestedStacks = stack.node.children.filter((child): child is NestedStack => NestedStack.isNestedStack(child));
  for (const nested of nestedStacks) {
    const resourceId = stack.getLogicalId(nested.nestedStackResource as CfnElement);
    const nestedResource = merged.Resources[resourceId];
    const passed: Record<string, unknown> = nestedResource?.Properties?.Parameters ?? {};
    const inner = wholeTemplate(nested).toJSON();
    const withParameters = substitute(inner, (node) => {
      const ref = node.Ref;
      return typeof ref === 'string' && ref in passed ? passed[ref] : undefined;
    }) as Record<string, any>;
    for (const [logicalId, value] of Object.entries(withParameters.Resources ?? {})) {
      if (merged.Resources[logicalId]) throw new Error(`Logical id ${logicalId} is in both ${stack.stackName} and ${nested.node.id}`);
      merged.Resources[logicalId] = value;
    }
    delete merged.Resources[resourceId];
    const outputs: Record<string, { Value: unknown }> = withParameters.Outputs ?? {};
    Object.assign(
      merged,
      substitute(merged, (node) => {
        const getAtt = node['Fn::GetAtt'];
        if (!Array.isArray(getAtt) || getAtt[0] !== resourceId) return undefined;
        return outputs[String(getAtt[1]).replace(/^Outputs\./, '')]?.Value;
      }),
    );
  }
  return Template.fromJSON(merged);
}

function substitute(value: unknown, replacement: (node: Record<string, any>) => unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => substitute(item, replacement));
  if (value && typeof value === 'object') {
    const replaced = replacement(value as Record<string, any>);
    if (replaced !== undefined) return replaced;
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, substitute(item, replacement)]));
  }
  return value;
}
