import {
  DescribeTaskDefinitionCommand,
  type ECSClient,
  type EFSVolumeConfiguration,
  type LogConfiguration,
  type NetworkConfiguration,
  type RuntimePlatform,
  type TaskDefinition,
} from '@aws-sdk/client-ecs';
import { setTimeout as sleep } from 'node:timers/promises';
import { ServiceBusyError } from '../errors.js';
import { isThrottling } from './shared-reads.js';

/*
 * The parts every task this service runs on the workload cluster shares, a container's
 * (lib/aws/ecs-runtime.ts) and a volume chore's (lib/aws/volume-chores.ts): its network, its logs,
 * its platform, its EFS mount, and what a throttled ECS call becomes.
 */

/** Where a task's network interface goes: the workload subnets and security group. */
export interface WorkloadTaskNetwork {
  subnetIds: readonly string[];
  securityGroupIds: readonly string[];
  assignPublicIp: boolean;
}

/** RunTask's networkConfiguration for Fargate's awsvpc mode, the only one it has. */
export const awsvpcNetworkFor = (network: WorkloadTaskNetwork): NetworkConfiguration => ({
  awsvpcConfiguration: {
    subnets: [...network.subnetIds],
    securityGroups: [...network.securityGroupIds],
    assignPublicIp: network.assignPublicIp ? 'ENABLED' : 'DISABLED',
  },
});

/**
 * awslogs into the workload log group; the driver names each task's stream
 * `<prefix>/<container name>/<task id>` (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/using_awslogs.html).
 */
export const awslogsFor = (logs: { logGroupName: string; region: string; logStreamPrefix: string }): LogConfiguration => ({
  logDriver: 'awslogs',
  options: {
    'awslogs-group': logs.logGroupName,
    'awslogs-region': logs.region,
    'awslogs-stream-prefix': logs.logStreamPrefix,
  },
});

/** Fargate's default is X86_64 (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_RuntimePlatform.html); nothing said, nothing set. */
export const runtimePlatformFor = (cpuArchitecture: 'X86_64' | 'ARM64' | undefined): { runtimePlatform?: RuntimePlatform } =>
  cpuArchitecture ? { runtimePlatform: { cpuArchitecture, operatingSystemFamily: 'LINUX' } } : {};

/**
 * An EFS volume mounted through its access point with TLS and IAM authorization, so the mount is
 * made as the task role (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_EFSVolumeConfiguration.html:
 * IAM authorization needs transit encryption and the root directory left to the access point).
 */
export const efsVolumeFor = (fileSystemId: string, accessPointId: string): EFSVolumeConfiguration => ({
  fileSystemId,
  transitEncryption: 'ENABLED',
  authorizationConfig: { accessPointId, iam: 'ENABLED' },
});

/**
 * How long a caller is told to wait after ECS throttled: ECS refills its buckets every second
 * (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/request-throttling.html), and a
 * few seconds let the burst recover for everyone sharing the account.
 */
const ECS_RETRY_AFTER_S = 5;

/**
 * A throttle that outlasted the SDK's retries (its standard mode retries a ThrottlingException
 * with backoff: https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html)
 * becomes ServiceBusyError: the domain leaves things as they were and the caller gets 503 with
 * Retry-After, never a 500.
 */
export async function busyWhenThrottled<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (isThrottling(error)) throw new ServiceBusyError('ECS is busy (it throttled this request); try again shortly', ECS_RETRY_AFTER_S);
    throw error;
  }
}

/**
 * A family's latest ACTIVE revision: DescribeTaskDefinition with a bare family answers that one
 * (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_DescribeTaskDefinition.html); a
 * family never registered, or all of whose revisions are deregistered, is a ClientException
 * ("Unable to describe task definition"), here nothing.
 */
export async function latestRevisionOf(client: ECSClient, family: string): Promise<TaskDefinition | undefined> {
  try {
    return (await busyWhenThrottled(client.send(new DescribeTaskDefinitionCommand({ taskDefinition: family })))).taskDefinition;
  } catch (error) {
    if (error instanceof Error && error.name === 'ClientException') return undefined;
    throw error;
  }
}

/**
 * The waits between RunTask attempts while ECS cannot assume the task's role yet: a volume's role
 * is made when the volume is (lib/aws/efs-volume-backend.ts), and a container created right after
 * it launches before IAM's change reaches ECS ("changes ... take time to become visible from all
 * possible endpoints": https://docs.aws.amazon.com/IAM/latest/UserGuide/troubleshoot_general.html#troubleshoot_general_eventual-consistency).
 * ECS then refuses RunTask with ClientException "ECS was unable to assume the role … that was
 * provided for this task". About 15 s in all; a role still refused after that is a launch error.
 */
export const ROLE_PROPAGATION_WAITS_MS: readonly number[] = [1000, 2000, 4000, 8000];

const isRoleRefusal = (error: unknown): error is Error =>
  error instanceof Error && error.name === 'ClientException' && /unable to assume the role/i.test(error.message);

/** Runs `runTask`, again after each of `waits` while ECS cannot assume the task's role; `refusal` words the last refusal. */
export async function onceTheRoleIsAssumable<T>(
  waits: readonly number[],
  runTask: () => Promise<T>,
  refusal: (message: string) => Error,
): Promise<T> {
  for (const wait of waits) {
    try {
      return await runTask();
    } catch (error) {
      if (!isRoleRefusal(error)) throw error;
    }
    await sleep(wait);
  }
  try {
    return await runTask();
  } catch (error) {
    if (isRoleRefusal(error)) throw refusal(error.message);
    throw error;
  }
}
