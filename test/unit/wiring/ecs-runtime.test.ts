import {
  DescribeTaskDefinitionCommand,
  DescribeTasksCommand,
  ECSClient,
  RegisterTaskDefinitionCommand,
  RunTaskCommand,
} from '@aws-sdk/client-ecs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { taskFamilyFor } from '../../../lib/aws/ecs-runtime.js';
import { loadConfig } from '../../../lib/config.js';
import { ecsRuntimeFrom } from '../../../lib/wiring/ecs-runtime.js';
import { nginxWorkload } from '../../support/workloads.js';

const ecsMock = mockClient(ECSClient);
const IMAGE = 'public.ecr.aws/nginx/nginx:stable-alpine';

const environment = (extra: Record<string, string> = {}) => ({
  CONTAINER_RUNTIME: 'ecs',
  ECS_CLUSTER_ARN: 'arn:aws:ecs:eu-west-1:123456789012:cluster/workloads',
  ECS_TASK_FAMILY: 'workload',
  ECS_TASK_ROLE_ARN: 'arn:aws:iam::123456789012:role/task',
  ECS_EXECUTION_ROLE_ARN: 'arn:aws:iam::123456789012:role/execution',
  ECS_LOG_GROUP: 'workload-logs',
  ECS_SUBNET_IDS: 'subnet-a',
  ECS_SECURITY_GROUP_IDS: 'sg-1',
  AWS_REGION: 'eu-west-1',
  ...extra,
});

async function launchWith(env: Record<string, string>) {
  await ecsRuntimeFrom(loadConfig(env)).runTask({
    containerId: '0190a3e4-5b6c-7d8e-9f01-23456789abcd',
    hostname: 'web-1',
    ...nginxWorkload(),
    image: IMAGE,
    clientToken: '0190a3e4-5b6c-7d8e-9f01-23456789abcd:1',
    mounts: [],
  });
  return ecsMock.commandCalls(RegisterTaskDefinitionCommand)[0]?.args[0].input;
}

describe('ecsRuntimeFrom: the container CPU architecture (ECS_CPU_ARCHITECTURE, CDK context containerCpuArchitecture)', () => {
  beforeEach(() => {
    ecsMock.reset();
    // A family never registered, as DescribeTaskDefinition reports it.
    ecsMock
      .on(DescribeTaskDefinitionCommand)
      .rejects(Object.assign(new Error('Unable to describe task definition.'), { name: 'ClientException' }));
    ecsMock.on(RegisterTaskDefinitionCommand).callsFake((input) => ({
      taskDefinition: { taskDefinitionArn: `arn:aws:ecs:eu-west-1:123456789012:task-definition/${input.family}:1` },
    }));
    ecsMock.on(RunTaskCommand).resolves({ tasks: [{ taskArn: 'arn:aws:ecs:eu-west-1:123456789012:task/workloads/abc' }], failures: [] });
  });

  it('registers x86_64 Linux task definitions by default, in the families named by image and port', async () => {
    // Act
    const registered = await launchWith(environment());
    // Assess
    expect(registered?.family).toBe(taskFamilyFor('workload', IMAGE, 8080));
    expect(registered?.runtimePlatform).toEqual({ cpuArchitecture: 'X86_64', operatingSystemFamily: 'LINUX' });
  });

  it('registers ARM64 task definitions in families of their own, so x86_64 ones registered before are not reused', async () => {
    // Act
    const registered = await launchWith(environment({ ECS_CPU_ARCHITECTURE: 'ARM64' }));
    // Assess
    expect(registered?.family).toBe(taskFamilyFor('workload-arm64', IMAGE, 8080));
    expect(registered?.runtimePlatform).toEqual({ cpuArchitecture: 'ARM64', operatingSystemFamily: 'LINUX' });
    expect(ecsMock.commandCalls(DescribeTaskDefinitionCommand)[0]?.args[0].input.taskDefinition).toBe(registered?.family);
  });

  it('after a switch to ARM64, still counts the tasks of the x86_64 families as its own, so the reconciler stops or keeps them', async () => {
    const x86Family = taskFamilyFor('workload', IMAGE, 8080);
    const task = (family: string, n: number) => ({
      taskArn: `arn:aws:ecs:eu-west-1:123456789012:task/workloads/${n}`,
      startedBy: '0190a3e4-5b6c-7d8e-9f01-23456789abcd',
      version: 3,
      lastStatus: 'RUNNING',
      desiredStatus: 'RUNNING',
      taskDefinitionArn: `arn:aws:ecs:eu-west-1:123456789012:task-definition/${family}:1`,
    });
    ecsMock.on(DescribeTasksCommand).resolves({
      tasks: [task(x86Family, 1), task(`workload-arm64-${x86Family.slice('workload-'.length)}`, 2), task('proxy', 3)],
      failures: [],
    });

    const tasks = await ecsRuntimeFrom(loadConfig(environment({ ECS_CPU_ARCHITECTURE: 'ARM64' }))).describeTasks(['1', '2', '3']);

    expect(tasks.map((each) => Boolean(each.status))).toEqual([true, true, false]);
  });

  it('refuses an architecture Fargate does not offer at configuration load', () => {
    // Act / Assess
    expect(() => loadConfig(environment({ ECS_CPU_ARCHITECTURE: 'riscv64' }))).toThrow(/ECS_CPU_ARCHITECTURE/);
  });
});
