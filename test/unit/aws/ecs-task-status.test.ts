import { describe, expect, it } from 'vitest';
import { taskEndpointFromEcs } from '../../../lib/aws/ecs-task-status.js';

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
  it('reads the ENI’s private address and the hostname and port the service set in the override', () => {
    expect(taskEndpointFromEcs(detail)).toEqual({ ip: '10.0.3.17', hostname: 'web-1', port: 3000 });
  });

  it('falls back to the container’s network interface when the attachment has no address yet', () => {
    expect(taskEndpointFromEcs({ ...detail, attachments: [{ type: 'eni', details: [] }] })).toMatchObject({ ip: '10.0.3.17' });
  });

  it('answers no address before the network is attached, and nothing of a task the service did not start', () => {
    expect(taskEndpointFromEcs({ overrides: detail.overrides })).toEqual({ hostname: 'web-1', port: 3000 });
    expect(taskEndpointFromEcs({})).toEqual({});
    expect(taskEndpointFromEcs({ attachments: [{ type: 'eni', details: [{ name: 'privateIPv4Address', value: 'not-an-ip' }] }] })).toEqual(
      {},
    );
  });
});
