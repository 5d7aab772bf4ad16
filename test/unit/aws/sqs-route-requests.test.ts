import { describe, expect, it } from 'vitest';
import { routeRequestOf } from '../../../lib/aws/sqs-route-requests.js';

const containerId = '0190f1c2-0000-7000-8000-000000000003';
const taskArn = 'arn:aws:ecs:us-east-1:123456789012:task/workloads/0a1b2c3d4e5f40718293a4b5c6d7e8f9';
const probe = {
  kind: 'probe',
  phase: 'ready',
  containerId,
  task: { taskArn, containerId, version: 2, lastStatus: 'RUNNING', desiredStatus: 'RUNNING', address: '10.0.3.17' },
  port: 3000,
  since: 1,
  attempt: 0,
  failures: 0,
  routed: true,
};
const listed = { containerId, taskId: '0a1b2c3d4e5f40718293a4b5c6d7e8f9', hostname: 'web-1', ip: '10.0.3.17', port: 3000 };
const body = (message: object) => JSON.stringify(message);

describe('a route changes message', () => {
  it('is read back as the request this service sent, its probe job with it', () => {
    const publish = { kind: 'publish', containerId, taskArn, ip: '10.0.3.17', port: 3000, when: 'answering', probeAfter: probe };
    expect(routeRequestOf(body(publish))).toEqual(publish);
    const withdraw = { kind: 'withdraw', containerId, taskArn: listed.taskId, unless: 'held', route: listed };
    expect(routeRequestOf(body(withdraw))).toEqual(withdraw);
  });

  it('is dropped when it is not one: not JSON, an address that is not IPv4, another task’s probe job, a hostname the API refuses, an unknown condition', () => {
    const publish = { kind: 'publish', containerId, taskArn, ip: '10.0.3.17', when: 'running' };
    for (const bad of [
      'not json',
      body({ ...publish, ip: '10.0.3.256' }),
      body({ ...publish, ip: '::1' }),
      body({ ...publish, containerId: 'web-1' }),
      body({ ...publish, port: 70_000 }),
      body({ ...publish, when: 'always' }),
      body({ ...publish, probeAfter: { ...probe, task: { ...probe.task, taskArn: `${taskArn}x` } } }),
      body({ ...publish, probeAfter: { kind: 'relaunch', containerId } }),
      body({ kind: 'withdraw', containerId, taskArn, unless: 'sometimes' }),
      body({ kind: 'withdraw', containerId, taskArn, unless: 'held', route: { ...listed, hostname: 'Web_1' } }),
      body({
        kind: 'withdraw',
        containerId,
        taskArn,
        unless: 'held',
        route: { ...listed, containerId: '0190f1c2-0000-7000-8000-000000000004' },
      }),
      body({ kind: 'withdraw', containerId, taskArn, unless: 'held', route: { ...listed, ip: '' } }),
    ]) {
      expect(routeRequestOf(bad), bad).toBeUndefined();
    }
  });
});
