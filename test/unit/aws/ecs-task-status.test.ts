import { describe, expect, it } from 'vitest';
import { taskEndpointFromEcs, taskStatusFromEcs, type EcsTaskFields } from '../../../lib/aws/ecs-task-status.js';

/** The network and override parts of an "ECS Task State Change" detail, as ECS sends them for an awsvpc task. */
const detail = {
  attachments: [
    {
      id: 'a1',
      type: 'eni',
      status: 'ATTACHED',
      details: [
        { name: 'subnetId', value: 'subnet-a' },
        { name: 'networkInterfaceId', value: 'eni-1' },
        { name: 'privateIPv4Address', value: '10.0.3.17' },
      ],
    },
  ],
  containers: [{ networkInterfaces: [{ attachmentId: 'a1', privateIpv4Address: '10.0.3.17' }] }],
  overrides: {
    containerOverrides: [
      {
        name: 'app',
        environment: [
          { name: 'GREETING', value: 'hi' },
          { name: 'PORT', value: '3000' },
          { name: 'CONTAINER_HOSTNAME', value: 'web-1' },
        ],
      },
    ],
  },
};

describe('taskEndpointFromEcs', () => {
  it('reads only the ENI’s private address: the override’s environment is the user’s to fill', () => {
    expect(taskEndpointFromEcs(detail)).toEqual({ ip: '10.0.3.17' });
  });

  it('falls back to the container’s network interface when the attachment has no address yet', () => {
    expect(taskEndpointFromEcs({ containers: detail.containers, attachments: [{ type: 'eni', details: [] }] })).toEqual({
      ip: '10.0.3.17',
    });
  });

  it('answers no address before the network is attached', () => {
    expect(taskEndpointFromEcs({})).toEqual({});
    expect(taskEndpointFromEcs({ attachments: [{ type: 'eni', details: [{ name: 'privateIPv4Address', value: 'not-an-ip' }] }] })).toEqual(
      {},
    );
  });
});

describe('taskStatusFromEcs: why a task stopped, in words its owner can act on', () => {
  const stopped = {
    taskArn: 'arn:aws:ecs:us-east-1:123456789012:task/workloads/0a1b2c3d4e5f40718293a4b5c6d7e8f9',
    startedBy: '0190f1c2-0000-7000-8000-000000000003',
    version: 5,
    lastStatus: 'STOPPED',
    desiredStatus: 'STOPPED',
  };
  const reasonOf = (fields: Partial<EcsTaskFields>) => taskStatusFromEcs({ ...stopped, ...fields });

  it.each([
    [
      'an image that cannot be pulled',
      {
        stopCode: 'TaskFailedToStart',
        stoppedReason:
          'CannotPullContainerError: pull image manifest has been retried 1 time(s): failed to resolve ref ghcr.io/acme/nope:1: not found',
      },
      { reason: 'image pull failed: pull image manifest has been retried 1 time(s): failed to resolve ref ghcr.io/acme/nope:1: not found' },
    ],
    [
      'a container killed for its memory',
      {
        stopCode: 'EssentialContainerExited',
        stoppedReason: 'Essential container in task exited',
        containers: [{ exitCode: 137, reason: 'OutOfMemoryError: Container killed due to memory usage' }],
        overrides: { containerOverrides: [{ memory: 512 }] },
      },
      { reason: 'out of memory (limit 512 MB)', exitCode: 137 },
    ],
    [
      'a process that exits',
      { stopCode: 'EssentialContainerExited', stoppedReason: 'Essential container in task exited', containers: [{ exitCode: 3 }] },
      { reason: 'exited with code 3', exitCode: 3 },
    ],
    [
      'a stop on request',
      { stopCode: 'UserInitiated', stoppedReason: 'Container stopped through the API' },
      { reason: 'stopped on request' },
    ],
    [
      'a task that could not be set up',
      { stopCode: 'TaskFailedToStart', stoppedReason: 'ResourceInitializationError: unable to pull secrets or registry auth: timeout' },
      { reason: 'task could not be set up: unable to pull secrets or registry auth: timeout' },
    ],
  ])('%s', (_, fields, expected) => {
    expect(reasonOf(fields)).toMatchObject(expected);
  });

  it('says nothing of a task that runs', () => {
    const running = taskStatusFromEcs({ ...stopped, lastStatus: 'RUNNING', desiredStatus: 'RUNNING' });
    expect(running).not.toHaveProperty('reason');
    expect(running).not.toHaveProperty('exitCode');
  });
});

describe('taskStatusFromEcs with the du sidecar', () => {
  it("reads the app's exit code and reason, never the sidecar's, whichever ECS lists first", () => {
    // Prepare: the app exited 3; ECS then stopped the sidecar (143), and lists it first
    const task: EcsTaskFields = {
      taskArn: 'arn:aws:ecs:us-east-1:123456789012:task/workloads/0123456789abcdef0123456789abcdef',
      startedBy: '0190a3e4-5b6c-7d8e-9f01-23456789abcd',
      version: 5,
      lastStatus: 'STOPPED',
      desiredStatus: 'STOPPED',
      stopCode: 'EssentialContainerExited',
      stoppedReason: 'Essential container in task exited',
      containers: [
        { name: 'volume-usage', exitCode: 143 },
        { name: 'app', exitCode: 3 },
      ],
    };

    // Act
    const status = taskStatusFromEcs(task);

    // Assess
    expect(status).toMatchObject({ exitCode: 3, reason: 'exited with code 3' });
  });
});

describe('taskStatusFromEcs: the digest its image resolved to', () => {
  const running = (containers: EcsTaskFields['containers']): EcsTaskFields => ({
    taskArn: 'arn:aws:ecs:us-east-1:123456789012:task/workloads/0123456789abcdef0123456789abcdef',
    startedBy: '0190a3e4-5b6c-7d8e-9f01-23456789abcd',
    version: 3,
    lastStatus: 'RUNNING',
    desiredStatus: 'RUNNING',
    containers,
  });
  const appDigest = `sha256:${'a'.repeat(64)}`;

  it("reads the app container's imageDigest, never the sidecar's, and nothing that is not a sha256 digest", () => {
    // Prepare: ECS lists the sidecar first
    const withSidecar = running([
      { name: 'volume-usage', imageDigest: `sha256:${'b'.repeat(64)}` },
      { name: 'app', imageDigest: appDigest },
    ]);

    // Act
    const statuses = [withSidecar, running([{ name: 'app', imageDigest: 'sha256:short' }]), running([{ name: 'app' }])].map(
      taskStatusFromEcs,
    );

    // Assess
    expect(statuses[0]?.imageDigest).toBe(appDigest);
    expect(statuses[1]).not.toHaveProperty('imageDigest');
    expect(statuses[2]).not.toHaveProperty('imageDigest');
  });

  it('reads the release it runs from its group, and none from ECS’s default group', () => {
    // Act
    const launched = taskStatusFromEcs({ ...running([{ name: 'app', imageDigest: appDigest }]), group: 'release:12' });
    const defaulted = taskStatusFromEcs({ ...running([{ name: 'app' }]), group: 'family:workload-abc' });

    // Assess
    expect(launched).toMatchObject({ release: 12, imageDigest: appDigest });
    expect(defaulted).not.toHaveProperty('release');
  });
});
