import { randomUUID } from 'node:crypto';
import { AwsError, type FaultCounts } from './faults.js';

const ACCOUNT = '123456789012';

export interface IamSimOptions {
  /**
   * The permissions boundary the caller's policy requires on every role it creates (the stack's
   * iam:CreateRole condition on iam:PermissionsBoundary): a CreateRole without it is AccessDenied,
   * as IAM answers a request its policy does not allow. Unset: any CreateRole is allowed.
   */
  requiredBoundaryArn?: string;
}

export interface SimRole {
  RoleName: string;
  Path: string;
  Arn: string;
  RoleId: string;
  AssumeRolePolicyDocument: any;
  PermissionsBoundary?: string;
  policies: Map<string, any>;
}

/**
 * IAM's roles as the volume backend uses them (lib/aws/iam-volume-roles.ts), over the Query
 * protocol (form POST, XML answers): CreateRole, GetRole, PutRolePolicy, DeleteRolePolicy,
 * DeleteRole (https://docs.aws.amazon.com/IAM/latest/APIReference/API_CreateRole.html and its
 * neighbours), with their errors EntityAlreadyExists (409), NoSuchEntity (404) and
 * DeleteConflict (a role that still has an inline policy). `mayMount` is EFS's IAM check at mount
 * time, evaluated over these roles.
 */
export class IamSim {
  readonly roles = new Map<string, SimRole>();
  readonly calls = new Map<string, number>();

  constructor(
    private readonly options: IamSimOptions,
    private readonly faults: FaultCounts,
  ) {}

  handle(body: string): string {
    const input = Object.fromEntries(new URLSearchParams(body));
    const action = input.Action ?? '';
    this.calls.set(action, (this.calls.get(action) ?? 0) + 1);
    switch (action) {
      case 'CreateRole':
        return this.createRole(input);
      case 'GetRole':
        return result('GetRole', roleXml(this.role(input.RoleName)));
      case 'PutRolePolicy':
        this.role(input.RoleName).policies.set(String(input.PolicyName), JSON.parse(input.PolicyDocument ?? '{}'));
        return result('PutRolePolicy', '');
      case 'DeleteRolePolicy': {
        const role = this.role(input.RoleName);
        if (!role.policies.delete(String(input.PolicyName)))
          throw new AwsError('NoSuchEntity', `The role policy with name ${input.PolicyName} cannot be found.`, 404);
        return result('DeleteRolePolicy', '');
      }
      case 'DeleteRole': {
        const role = this.role(input.RoleName);
        if (role.policies.size > 0) throw new AwsError('DeleteConflict', 'Cannot delete entity, must delete policies first.', 409);
        this.roles.delete(role.RoleName);
        return result('DeleteRole', '');
      }
      default:
        throw new AwsError('InvalidAction', `The simulator does not model ${action}`);
    }
  }

  private createRole(input: Record<string, string>): string {
    const name = String(input.RoleName ?? '');
    if (this.options.requiredBoundaryArn && input.PermissionsBoundary !== this.options.requiredBoundaryArn) {
      this.faults.add('iam.AccessDenied.CreateRole');
      throw new AwsError('AccessDenied', `User is not authorized to perform: iam:CreateRole on resource: role ${name}`, 403);
    }
    if (this.roles.has(name)) throw new AwsError('EntityAlreadyExists', `Role with name ${name} already exists.`, 409);
    const path = input.Path ?? '/';
    const role: SimRole = {
      RoleName: name,
      Path: path,
      Arn: `arn:aws:iam::${ACCOUNT}:role${path}${name}`,
      RoleId: `AROA${randomUUID().replaceAll('-', '').slice(0, 17).toUpperCase()}`,
      AssumeRolePolicyDocument: JSON.parse(input.AssumeRolePolicyDocument ?? '{}'),
      ...(input.PermissionsBoundary ? { PermissionsBoundary: input.PermissionsBoundary } : {}),
      policies: new Map(),
    };
    this.roles.set(name, role);
    return result('CreateRole', roleXml(role));
  }

  private role(name: string | undefined): SimRole {
    const role = this.roles.get(String(name ?? ''));
    if (!role) throw new AwsError('NoSuchEntity', `The role with name ${name} cannot be found.`, 404);
    return role;
  }

  /**
   * Whether the role (by ARN) is allowed `action` on the file system through the access point:
   * an Allow in one of its inline policies whose resource is the file system (or `*`) and whose
   * StringEquals on elasticfilesystem:AccessPointArn, if any, names this access point. The file
   * system policy grants nothing (it only denies; infra/constructs/workload-volumes.ts), so the
   * role's own policy decides (https://docs.aws.amazon.com/efs/latest/ug/iam-access-control-nfs-efs.html).
   */
  mayMount(roleArn: string | undefined, action: string, fileSystemArn: string, accessPointArn: string): boolean {
    const role = [...this.roles.values()].find((candidate) => candidate.Arn === roleArn);
    if (!role) return false;
    return [...role.policies.values()].some((policy) =>
      [policy.Statement ?? []].flat().some((statement: any) => {
        const actions = [statement.Action ?? []].flat();
        const resources = [statement.Resource ?? []].flat();
        const pinned = statement.Condition?.StringEquals?.['elasticfilesystem:AccessPointArn'];
        return (
          statement.Effect === 'Allow' &&
          actions.includes(action) &&
          (resources.includes(fileSystemArn) || resources.includes('*')) &&
          (pinned === undefined || [pinned].flat().includes(accessPointArn))
        );
      }),
    );
  }
}

const result = (action: string, inner: string): string =>
  `<${action}Response xmlns="https://iam.amazonaws.com/doc/2010-05-08/"><${action}Result>${inner}</${action}Result><ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata></${action}Response>`;

const roleXml = (role: SimRole): string =>
  `<Role><Path>${role.Path}</Path><RoleName>${role.RoleName}</RoleName><RoleId>${role.RoleId}</RoleId><Arn>${role.Arn}</Arn></Role>`;

export const iamErrorXml = (code: string, message: string): string =>
  `<ErrorResponse xmlns="https://iam.amazonaws.com/doc/2010-05-08/"><Error><Type>Sender</Type><Code>${code}</Code><Message>${message.replaceAll('<', '&lt;')}</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`;
