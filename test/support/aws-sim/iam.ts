import { randomUUID } from 'node:crypto';
import { AwsError, type FaultCounts } from './faults.js';
import { Buckets } from './token-bucket.js';

const ACCOUNT = '123456789012';

/*
 * IAM's documented quotas (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html):
 * "Roles in an AWS account: 1,000" (adjustable), a role name of at most 64 characters, and "Role
 * policy size cannot exceed 10,240 characters" for the aggregate of a role's inline policies, white
 * space not counted.
 */
export const ROLES_PER_ACCOUNT = 1000;
export const ROLE_NAME_MAX_LENGTH = 64;
export const ROLE_INLINE_POLICY_MAX_CHARS = 10_240;

/**
 * How long a new role takes before ECS can assume it for a task. IAM is eventually consistent: "a
 * change that you make in IAM ... takes time to become visible from all possible endpoints", so a
 * role made a moment ago may not yet be usable by another service
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/troubleshoot_general.html#troubleshoot_general_eventual-consistency);
 * AWS gives no figure, seconds are what is seen. Meanwhile RunTask answers ClientException "ECS was
 * unable to assume the role …" (as ECS words it: aws-samples/aws-modern-application-workshop#149).
 */
export const ROLE_PROPAGATION_MS = 2000;

export interface IamSimOptions {
  /**
   * The permissions boundary the caller's policy requires on every role it creates (the stack's
   * iam:CreateRole condition on iam:PermissionsBoundary): a CreateRole without it is AccessDenied,
   * as IAM answers a request its policy does not allow. Unset: any CreateRole is allowed.
   */
  requiredBoundaryArn?: string;
  /** Roles the account holds (IAM: ROLES_PER_ACCOUNT); past it CreateRole answers LimitExceeded. */
  roleLimit?: number;
  /** How long a new role stays invisible to ECS (ROLE_PROPAGATION_MS). */
  propagationMs?: number;
  /**
   * IAM's request rate, a token bucket over every action: a request finding it empty answers
   * `Throttling` (HTTP 400), which the SDK's standard retry mode retries with backoff. IAM
   * publishes no figure for its control plane's rate; unset, nothing is throttled.
   */
  throttle?: { capacity: number; refillPerSecond: number };
}

export interface SimRole {
  RoleName: string;
  Path: string;
  Arn: string;
  RoleId: string;
  AssumeRolePolicyDocument: any;
  PermissionsBoundary?: string;
  policies: Map<string, any>;
  /** When ECS can first assume it (IAM's eventual consistency). */
  usableAt: number;
}

/**
 * IAM's roles as the volume backend's @aws-sdk/client-iam calls them (lib/aws/iam-volume-roles.ts),
 * on the wire the SDK speaks, the Query protocol (form POST, XML answers): CreateRole, GetRole,
 * PutRolePolicy, DeleteRolePolicy, DeleteRole
 * (https://docs.aws.amazon.com/IAM/latest/APIReference/API_CreateRole.html and its neighbours), with
 * their errors EntityAlreadyExists (409), NoSuchEntity (404), DeleteConflict (a role that still has
 * an inline policy), LimitExceeded (409: the account's roles, a role's policy size), ValidationError
 * (a name too long) and Throttling. `mayMount` is EFS's IAM check at mount time and `ecsMayAssume`
 * ECS's at RunTask, both evaluated over these roles.
 */
export class IamSim {
  readonly roles = new Map<string, SimRole>();
  readonly calls = new Map<string, number>();
  /** ARNs of roles deleted through this simulator: ECS can no longer assume them. */
  private readonly deletedArns = new Set<string>();
  private readonly buckets: Buckets;

  constructor(
    private readonly options: IamSimOptions,
    private readonly faults: FaultCounts,
  ) {
    this.buckets = new Buckets({ all: options.throttle });
  }

  handle(body: string): string {
    const input = Object.fromEntries(new URLSearchParams(body));
    const action = input.Action ?? '';
    this.calls.set(action, (this.calls.get(action) ?? 0) + 1);
    if (!this.buckets.take('all')) {
      this.faults.add(`iam.Throttling.${action}`);
      throw new AwsError('Throttling', 'Rate exceeded', 400);
    }
    switch (action) {
      case 'CreateRole':
        return this.createRole(input);
      case 'GetRole':
        return result('GetRole', roleXml(this.role(input.RoleName)));
      case 'PutRolePolicy':
        return this.putRolePolicy(input);
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
        this.deletedArns.add(role.Arn);
        return result('DeleteRole', '');
      }
      default:
        throw new AwsError('InvalidAction', `The simulator does not model ${action}`);
    }
  }

  private createRole(input: Record<string, string>): string {
    const name = String(input.RoleName ?? '');
    if (name.length > ROLE_NAME_MAX_LENGTH)
      throw new AwsError(
        'ValidationError',
        `1 validation error detected: Value '${name}' at 'roleName' failed to satisfy constraint: Member must have length less than or equal to ${ROLE_NAME_MAX_LENGTH}`,
      );
    if (this.options.requiredBoundaryArn && input.PermissionsBoundary !== this.options.requiredBoundaryArn) {
      this.faults.add('iam.AccessDenied.CreateRole');
      throw new AwsError('AccessDenied', `User is not authorized to perform: iam:CreateRole on resource: role ${name}`, 403);
    }
    // Names are unique within the account whatever their case (reference_iam-quotas.html).
    if ([...this.roles.keys()].some((existing) => existing.toLowerCase() === name.toLowerCase()))
      throw new AwsError('EntityAlreadyExists', `Role with name ${name} already exists.`, 409);
    if (this.roles.size >= (this.options.roleLimit ?? ROLES_PER_ACCOUNT)) {
      this.faults.add('iam.LimitExceeded.roles');
      throw new AwsError('LimitExceeded', `Cannot exceed quota for RolesPerAccount: ${this.options.roleLimit ?? ROLES_PER_ACCOUNT}`, 409);
    }
    const path = input.Path ?? '/';
    const role: SimRole = {
      RoleName: name,
      Path: path,
      Arn: `arn:aws:iam::${ACCOUNT}:role${path}${name}`,
      RoleId: `AROA${randomUUID().replaceAll('-', '').slice(0, 17).toUpperCase()}`,
      AssumeRolePolicyDocument: JSON.parse(input.AssumeRolePolicyDocument ?? '{}'),
      ...(input.PermissionsBoundary ? { PermissionsBoundary: input.PermissionsBoundary } : {}),
      policies: new Map(),
      usableAt: Date.now() + (this.options.propagationMs ?? ROLE_PROPAGATION_MS),
    };
    this.roles.set(name, role);
    return result('CreateRole', roleXml(role));
  }

  private putRolePolicy(input: Record<string, string>): string {
    const role = this.role(input.RoleName);
    const document = JSON.parse(input.PolicyDocument ?? '{}');
    const others = [...role.policies.entries()].filter(([policyName]) => policyName !== input.PolicyName).map(([, policy]) => policy);
    const size = [...others, document].reduce((total: number, policy) => total + JSON.stringify(policy).replace(/\s/g, '').length, 0);
    if (size > ROLE_INLINE_POLICY_MAX_CHARS) {
      this.faults.add('iam.LimitExceeded.policySize');
      throw new AwsError(
        'LimitExceeded',
        `Maximum policy size of ${ROLE_INLINE_POLICY_MAX_CHARS} bytes exceeded for role ${role.RoleName}`,
        409,
      );
    }
    role.policies.set(String(input.PolicyName), document);
    return result('PutRolePolicy', '');
  }

  /**
   * Nothing when ECS can assume the role for a task now: it exists, has propagated, and trusts
   * ecs-tasks.amazonaws.com. Otherwise RunTask's ClientException message, as ECS words it.
   */
  ecsMayAssume(roleArn: string): string | undefined {
    const role = [...this.roles.values()].find((candidate) => candidate.Arn === roleArn);
    // A role this simulator never made is the stack's own (CloudFormation made it), outside this model.
    if (!role && !this.deletedArns.has(roleArn)) return undefined;
    const trusted = [role?.AssumeRolePolicyDocument?.Statement ?? []]
      .flat()
      .some(
        (statement: any) => statement.Effect === 'Allow' && [statement.Principal?.Service ?? []].flat().includes('ecs-tasks.amazonaws.com'),
      );
    if (role && trusted && Date.now() >= role.usableAt) return undefined;
    if (role && trusted) this.faults.add('iam.notYetPropagated');
    return `ECS was unable to assume the role '${roleArn}' that was provided for this task. Please verify that the role being passed has the proper trust relationship and permissions and that your IAM user has permissions to pass this role.`;
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
