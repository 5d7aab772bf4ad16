import {
  CreateRoleCommand,
  DeleteRoleCommand,
  DeleteRolePolicyCommand,
  EntityAlreadyExistsException,
  GetRoleCommand,
  IAMClient,
  LimitExceededException,
  NoSuchEntityException,
  PutRolePolicyCommand,
} from '@aws-sdk/client-iam';
import { ServiceBusyError } from '../errors.js';
import type { VolumeTaskRoles } from './efs-volume-backend.js';
import { isThrottling } from './shared-reads.js';

/**
 * Created once per Lambda container and shared by every invocation. IAM is global; the SDK signs
 * its calls in us-east-1 (https://docs.aws.amazon.com/general/latest/gr/iam-service.html). Its
 * standard retry mode retries IAM's `Throttling` answers with backoff before one reaches
 * `whenIamAnswers`.
 */
export const iamClient = new IAMClient({ region: 'us-east-1' });

/** IAM's control plane recovers from a throttle within seconds; a client told to wait that long finds it again. */
const IAM_RETRY_AFTER_S = 5;

/**
 * Volume roles through @aws-sdk/client-iam: CreateRole, GetRole, PutRolePolicy, DeleteRolePolicy,
 * DeleteRole (https://docs.aws.amazon.com/IAM/latest/APIReference/API_CreateRole.html and its
 * neighbours). Every role is created with the deployment's permissions boundary, which the control
 * plane's iam:CreateRole permission requires (infra/constructs/workload-volumes.ts), so a role it
 * makes can never hold more than EFS client access to the volumes' file system.
 */
export class IamVolumeRoles implements VolumeTaskRoles {
  constructor(
    private readonly permissionsBoundaryArn: string,
    private readonly client: IAMClient = iamClient,
  ) {}

  async ensure(role: { path: string; name: string; trustPolicy: object; policyName: string; policy: object }): Promise<string> {
    let arn: string;
    try {
      const created = await whenIamAnswers(
        this.client.send(
          new CreateRoleCommand({
            RoleName: role.name,
            Path: role.path,
            AssumeRolePolicyDocument: JSON.stringify(role.trustPolicy),
            PermissionsBoundary: this.permissionsBoundaryArn,
            Description: 'Mounts one volume through its own EFS access point',
          }),
        ),
      );
      arn = created.Role!.Arn!;
    } catch (error) {
      // A retried create finds the role the first attempt made.
      if (!(error instanceof EntityAlreadyExistsException)) throw error;
      arn = (await whenIamAnswers(this.client.send(new GetRoleCommand({ RoleName: role.name })))).Role!.Arn!;
    }
    await whenIamAnswers(
      this.client.send(
        new PutRolePolicyCommand({ RoleName: role.name, PolicyName: role.policyName, PolicyDocument: JSON.stringify(role.policy) }),
      ),
    );
    return arn;
  }

  async remove(role: { name: string; policyName: string }): Promise<void> {
    // The inline policy first: IAM refuses to delete a role that still has one (DeleteConflict).
    await goneIsDone(this.client.send(new DeleteRolePolicyCommand({ RoleName: role.name, PolicyName: role.policyName })));
    await goneIsDone(this.client.send(new DeleteRoleCommand({ RoleName: role.name })));
  }
}

/** A delete that finds nothing to delete has done its work (a retried delete). */
async function goneIsDone(call: Promise<unknown>): Promise<void> {
  try {
    await whenIamAnswers(call);
  } catch (error) {
    if (!(error instanceof NoSuchEntityException)) throw error;
  }
}

/**
 * A throttle the SDK's retries did not outlast, or the account holding as many roles as IAM allows
 * (1,000 unless raised: https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html),
 * becomes 503 with Retry-After, never a 500; anything else is thrown as it came.
 */
async function whenIamAnswers<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (isThrottling(error)) throw new ServiceBusyError('IAM is busy (it throttled this request); try again shortly', IAM_RETRY_AFTER_S);
    if (error instanceof LimitExceededException)
      throw new ServiceBusyError('This deployment holds as many volume roles as its AWS account allows; an operator must add room', 3600);
    throw error;
  }
}
