import { ArnFormat, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { REGISTRY_CREDENTIALS_TAG } from '../../lib/aws/registry-credential-secrets.js';
import { acknowledgeWildcardResource } from '../nag.js';

export interface RegistryCredentialSecretsProps {
  /** The workload's task execution role: ECS's pull reads a container's secret with it. */
  executionRole: iam.IRole;
}

/**
 * Containers' registry credentials (issue 33, item 5; docs/api.md, "Private images"): a
 * Secrets Manager secret per container, `<stack>/registry-credentials/<container id>`, made by the
 * create and PATCH functions and deleted by delete, tagged for what it is. The task execution role
 * reads only secrets under that name prefix that carry the tag; no function reads any.
 */
export class RegistryCredentialSecrets extends Construct {
  readonly prefix: string;
  /** Every such secret's ARN (Secrets Manager adds `-` and six characters to a name). */
  readonly secretArns: string;

  constructor(scope: Construct, id: string, props: RegistryCredentialSecretsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.prefix = `${stack.stackName}/registry-credentials`;
    this.secretArns = stack.formatArn({
      service: 'secretsmanager',
      resource: 'secret',
      resourceName: `${this.prefix}/*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    // What private registry authentication needs of the execution role
    // (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/private-auth.html); the secrets use
    // the account's AWS managed key, so no kms:Decrypt is needed.
    props.executionRole.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['secretsmanager:GetSecretValue'],
        resources: [this.secretArns],
        conditions: { StringEquals: { [`secretsmanager:ResourceTag/${REGISTRY_CREDENTIALS_TAG.key}`]: REGISTRY_CREDENTIALS_TAG.value } },
      }),
    );
    acknowledgeWildcardResource(
      props.executionRole,
      this.secretArns,
      "A secret per container, named at run time under this stack's registry-credentials prefix (and tagged for it): ECS reads the one a task definition names when it pulls.",
    );
  }

  /** The variable every function that names or keeps these secrets reads (lib/config.ts). */
  get functionEnvironment(): Record<string, string> {
    return { REGISTRY_CREDENTIALS_SECRET_PREFIX: this.prefix };
  }

  /** Lets a function create (tagged), replace and delete these secrets, never read them. */
  grantKeep(role: iam.IRole): void {
    const tagged = { [`secretsmanager:ResourceTag/${REGISTRY_CREDENTIALS_TAG.key}`]: REGISTRY_CREDENTIALS_TAG.value };
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['secretsmanager:CreateSecret', 'secretsmanager:TagResource'],
        resources: [this.secretArns],
        conditions: { StringEquals: { [`aws:RequestTag/${REGISTRY_CREDENTIALS_TAG.key}`]: REGISTRY_CREDENTIALS_TAG.value } },
      }),
    );
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['secretsmanager:PutSecretValue', 'secretsmanager:DeleteSecret'],
        resources: [this.secretArns],
        conditions: { StringEquals: tagged },
      }),
    );
    acknowledgeWildcardResource(
      role,
      this.secretArns,
      "A secret per container, named at run time under this stack's registry-credentials prefix; creation must carry the tag, and replacing or deleting needs it.",
    );
  }
}
