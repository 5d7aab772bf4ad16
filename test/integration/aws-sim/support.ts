import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { ECSClient } from '@aws-sdk/client-ecs';
import { Route53Client } from '@aws-sdk/client-route-53';
import { connect } from 'node:net';
import { EcsRuntime, type EcsRuntimeSettings } from '../../../lib/aws/ecs-runtime.js';
import type { AwsSim } from '../../support/aws-sim/index.js';

const credentials = { accessKeyId: 'simulated', secretAccessKey: 'simulated' };

/** Real SDK clients aimed at one simulator; `maxAttempts: 1` shows each refusal instead of retrying it. */
export function clientsFor(sim: AwsSim, maxAttempts = 1) {
  const common = { region: 'us-east-1', endpoint: sim.url, credentials, maxAttempts };
  return { ecs: new ECSClient(common), route53: new Route53Client(common), logs: new CloudWatchLogsClient(common) };
}

export const runtimeSettings: EcsRuntimeSettings = {
  clusterArn: 'arn:aws:ecs:us-east-1:123456789012:cluster/workloads',
  containerName: 'app',
  subnetIds: ['subnet-a'],
  securityGroupIds: ['sg-1'],
  assignPublicIp: false,
  taskDefinitions: {
    familyPrefix: 'container-hosting-workload',
    executionRoleArn: 'arn:aws:iam::123456789012:role/execution',
    logGroupName: 'workload-logs',
    logStreamPrefix: 'app',
    region: 'us-east-1',
  },
};

export const runtimeOn = (sim: AwsSim, maxAttempts = 3) => new EcsRuntime(runtimeSettings, clientsFor(sim, maxAttempts).ecs);

/** Whether `host:port` accepts a TCP connection within `timeoutMs`. */
export function accepts(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: timeoutMs });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
}

/**
 * Sends `count` requests at once and answers the error names of those refused, and how many a
 * token bucket of `capacity` refilled at `perSecond` may let through in the time the burst took
 * (the machine is shared, so a burst may take a few hundred milliseconds).
 */
export async function burst(count: number, send: () => Promise<unknown>, capacity: number, perSecond: number) {
  const startedAt = Date.now();
  const results = await Promise.allSettled(Array.from({ length: count }, send));
  const allowed = capacity + Math.ceil(((Date.now() - startedAt) / 1000) * perSecond);
  const refused = results.flatMap((result) => (result.status === 'rejected' ? [(result.reason as Error).name] : []));
  return { refused, passed: count - refused.length, allowed };
}
