import { CloudWatchClient, GetMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { CloudWatchMetrics, clusterNameOf, taskDefinitionFamilyOf, taskIdOf } from '../../../lib/aws/cloudwatch-metrics.js';

const cloudWatchMock = mockClient(CloudWatchClient);

const TASK_ARN = 'arn:aws:ecs:eu-west-1:123456789012:task/workloads/0123456789abcdef0123456789abcdef';
const NOW = Date.parse('2025-03-04T05:06:07.000Z');
let now = NOW;
let metrics: CloudWatchMetrics;
const query = { taskArn: TASK_ARN, containerId: '0190a3e4-5b6c-7d8e-9f01-23456789abcd', cpuCores: 2 };

const result = (id: string, values: number[]) => ({ Id: id, Values: values, Timestamps: values.map(() => new Date(NOW)) });

beforeEach(() => {
  cloudWatchMock.reset();
  now = NOW;
  metrics = new CloudWatchMetrics('workloads', 'container-hosting-workload', undefined, () => now);
});

/**
 * Exactly one GetMetricData was sent: the task's four Container Insights metrics, latest minute first,
 * under the dimension set enhanced observability publishes task metrics with.
 */
function expectOneQueryForTheTask(): void {
  const dimensions = [
    { Name: 'ClusterName', Value: 'workloads' },
    { Name: 'TaskDefinitionFamily', Value: 'container-hosting-workload' },
    { Name: 'TaskId', Value: '0123456789abcdef0123456789abcdef' },
  ];
  const stat = (metricName: string) => ({
    Metric: { Namespace: 'ECS/ContainerInsights', MetricName: metricName, Dimensions: dimensions },
    Period: 60,
    Stat: 'Average',
  });
  expect(cloudWatchMock.calls()).toHaveLength(1);
  expect(cloudWatchMock.commandCalls(GetMetricDataCommand)[0]!.args[0].input).toEqual({
    MetricDataQueries: [
      { Id: 'cpuUtilized', MetricStat: stat('CpuUtilized'), ReturnData: true },
      { Id: 'cpuReserved', MetricStat: stat('CpuReserved'), ReturnData: true },
      { Id: 'memoryUtilized', MetricStat: stat('MemoryUtilized'), ReturnData: true },
      { Id: 'ephemeralStorageUtilized', MetricStat: stat('EphemeralStorageUtilized'), ReturnData: true },
    ],
    StartTime: new Date(NOW - 5 * 60_000),
    EndTime: new Date(NOW),
    ScanBy: 'TimestampDescending',
  });
}

describe('CloudWatchMetrics', () => {
  it("asks Container Insights for the task's CPU, memory and storage over the last 5 minutes, per minute", async () => {
    cloudWatchMock.on(GetMetricDataCommand).resolves({ MetricDataResults: [] });

    await metrics.usageOf(query);

    expectOneQueryForTheTask();
  });

  it('maps the latest datapoint of each metric: CPU as a share of the reserved CPU', async () => {
    cloudWatchMock.on(GetMetricDataCommand).resolves({
      MetricDataResults: [
        result('cpuUtilized', [512, 100]),
        result('cpuReserved', [2048, 2048]),
        result('memoryUtilized', [300, 280]),
        result('ephemeralStorageUtilized', [1.25, 1.2]),
      ],
    });

    expect(await metrics.usageOf(query)).toEqual({
      cpuPercent: 25,
      memoryUsedMb: 300,
      diskUsedGb: 1.25,
      sampledAt: '2025-03-04T05:06:07.000Z',
    });
    expectOneQueryForTheTask();
  });

  it("answers a container's figures from memory for 60 s, then asks CloudWatch again", async () => {
    cloudWatchMock
      .on(GetMetricDataCommand)
      .resolvesOnce({ MetricDataResults: [result('memoryUtilized', [300])] })
      .resolvesOnce({ MetricDataResults: [result('memoryUtilized', [310])] });

    expect((await metrics.usageOf(query)).memoryUsedMb).toBe(300);
    now = NOW + 59_999;
    expect((await metrics.usageOf(query)).memoryUsedMb).toBe(300);
    expect(cloudWatchMock.commandCalls(GetMetricDataCommand)).toHaveLength(1);

    now = NOW + 60_000;
    expect((await metrics.usageOf(query)).memoryUsedMb).toBe(310);
    expect(cloudWatchMock.commandCalls(GetMetricDataCommand)).toHaveLength(2);
  });

  it('clamps CPU above the reservation to 100 percent', async () => {
    cloudWatchMock.on(GetMetricDataCommand).resolves({
      MetricDataResults: [result('cpuUtilized', [2100]), result('cpuReserved', [2048]), result('memoryUtilized', [1])],
    });

    expect((await metrics.usageOf(query)).cpuPercent).toBe(100);
    expectOneQueryForTheTask();
  });

  it('reads 0 for every figure while the task has no datapoints yet', async () => {
    cloudWatchMock.on(GetMetricDataCommand).resolves({
      MetricDataResults: [
        result('cpuUtilized', []),
        result('cpuReserved', []),
        result('memoryUtilized', []),
        result('ephemeralStorageUtilized', []),
      ],
    });

    // No sampledAt: a client can tell "no sample yet" from a measured 0.
    expect(await metrics.usageOf(query)).toEqual({ cpuPercent: 0, memoryUsedMb: 0, diskUsedGb: 0 });
    expectOneQueryForTheTask();
  });
});

describe('taskIdOf', () => {
  it('takes the id from a task ARN', () => {
    expect(taskIdOf(TASK_ARN)).toBe('0123456789abcdef0123456789abcdef');
  });
});

describe('taskDefinitionFamilyOf', () => {
  it('takes the family from a task definition ARN, and from a bare family with or without revision', () => {
    expect(taskDefinitionFamilyOf('arn:aws:ecs:eu-west-1:123456789012:task-definition/container-hosting-workload:7')).toBe(
      'container-hosting-workload',
    );
    expect(taskDefinitionFamilyOf('container-hosting-workload:7')).toBe('container-hosting-workload');
    expect(taskDefinitionFamilyOf('container-hosting-workload')).toBe('container-hosting-workload');
  });
});

describe('clusterNameOf', () => {
  it('takes the name from a cluster ARN, and a bare name as it is', () => {
    expect(clusterNameOf('arn:aws:ecs:us-east-1:123456789012:cluster/workloads')).toBe('workloads');
    expect(clusterNameOf('workloads')).toBe('workloads');
  });
});
