import { CloudWatchClient, GetMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { CloudWatchUsageHistory } from '../../../lib/aws/cloudwatch-usage-history.js';

const cloudWatchMock = mockClient(CloudWatchClient);

const CURRENT_TASK = 'arn:aws:ecs:eu-west-1:123456789012:task/workloads/0123456789abcdef0123456789abcdef';
const EARLIER_TASK = 'arn:aws:ecs:eu-west-1:123456789012:task/workloads/fedcba9876543210fedcba9876543210';
const START = Date.parse('2025-03-04T05:00:00.000Z');
const END = Date.parse('2025-03-04T06:00:30.000Z');
const minute = (n: number) => new Date(START + n * 60_000);
const CONTAINER_ID = '0190a3e4-5b6c-7d8e-9f01-23456789abcd';

const series = (id: string, points: Array<[number, number]>) => ({
  Id: id,
  Timestamps: points.map(([n]) => minute(n)),
  Values: points.map(([, value]) => value),
  StatusCode: 'Complete' as const,
});

let history: CloudWatchUsageHistory;
let clock = END;

beforeEach(() => {
  cloudWatchMock.reset();
  clock = END;
  history = new CloudWatchUsageHistory(
    'workloads',
    'container-hosting-workload',
    new CloudWatchClient({ region: 'eu-west-1' }),
    () => clock,
  );
});

const query = (tasks: string[]) => ({
  tasks: tasks.map((taskArn) => ({ taskArn, containerId: CONTAINER_ID, cpuCores: 1 })),
  start: START,
  end: END,
});

describe('CloudWatchUsageHistory', () => {
  it('reads the window in one GetMetricData with period 60, four metrics per task under the enhanced-observability dimensions', async () => {
    // Prepare
    cloudWatchMock.on(GetMetricDataCommand).resolves({
      MetricDataResults: [
        series('cpuUtilized0', [
          [0, 256],
          [1, 512],
        ]),
        series('cpuReserved0', [
          [0, 1024],
          [1, 1024],
        ]),
        series('memoryUtilized0', [
          [0, 100],
          [1, 120],
        ]),
        series('ephemeralStorageUtilized0', [
          [0, 1.5],
          [1, 1.5],
        ]),
      ],
    });
    // Act
    const minutes = await history.historyOf(query([CURRENT_TASK]));
    // Assess
    expect(cloudWatchMock.calls()).toHaveLength(1);
    const input = cloudWatchMock.commandCalls(GetMetricDataCommand)[0]!.args[0].input;
    expect(input.StartTime).toEqual(new Date(START));
    expect(input.EndTime).toEqual(new Date(END));
    expect(input.NextToken).toBeUndefined();
    expect(input.MetricDataQueries?.map((q) => [q.Id, q.MetricStat?.Metric?.MetricName, q.MetricStat?.Period, q.MetricStat?.Stat])).toEqual(
      [
        ['cpuUtilized0', 'CpuUtilized', 60, 'Average'],
        ['cpuReserved0', 'CpuReserved', 60, 'Average'],
        ['memoryUtilized0', 'MemoryUtilized', 60, 'Average'],
        ['ephemeralStorageUtilized0', 'EphemeralStorageUtilized', 60, 'Average'],
      ],
    );
    expect(input.MetricDataQueries?.[0]?.MetricStat?.Metric?.Dimensions).toEqual([
      { Name: 'ClusterName', Value: 'workloads' },
      { Name: 'TaskDefinitionFamily', Value: 'container-hosting-workload' },
      { Name: 'TaskId', Value: '0123456789abcdef0123456789abcdef' },
    ]);
    expect(minutes).toEqual([
      { minute: minute(0).getTime(), cpuPercent: 25, memoryUsedMb: 100, diskUsedGb: 1.5 },
      { minute: minute(1).getTime(), cpuPercent: 50, memoryUsedMb: 120, diskUsedGb: 1.5 },
    ]);
  });

  it('follows NextToken with the same queries and window, joining the pages (an empty page with a token included)', async () => {
    // Prepare: CloudWatch may answer a page with no data points and a token.
    cloudWatchMock
      .on(GetMetricDataCommand)
      .resolvesOnce({ MetricDataResults: [], NextToken: 'page-2' })
      .resolvesOnce({
        MetricDataResults: [series('cpuUtilized0', [[0, 100]]), series('cpuReserved0', [[0, 1000]])],
        NextToken: 'page-3',
      })
      .resolvesOnce({
        MetricDataResults: [series('cpuUtilized0', [[1, 300]]), series('cpuReserved0', [[1, 1000]]), series('memoryUtilized0', [[1, 64]])],
      });
    // Act
    const minutes = await history.historyOf(query([CURRENT_TASK]));
    // Assess
    const calls = cloudWatchMock.commandCalls(GetMetricDataCommand).map((call) => call.args[0].input);
    expect(calls.map((input) => input.NextToken)).toEqual([undefined, 'page-2', 'page-3']);
    for (const input of calls) {
      expect(input.MetricDataQueries).toEqual(calls[0]!.MetricDataQueries);
      expect([input.StartTime, input.EndTime]).toEqual([new Date(START), new Date(END)]);
    }
    expect(minutes).toEqual([
      { minute: minute(0).getTime(), cpuPercent: 10, memoryUsedMb: 0, diskUsedGb: 0 },
      { minute: minute(1).getTime(), cpuPercent: 30, memoryUsedMb: 64, diskUsedGb: 0 },
    ]);
  });

  it('asks for each recent task in the same call and keeps the newer task where two share a minute', async () => {
    // Prepare: a restart at minute 1; both tasks ran during it.
    cloudWatchMock.on(GetMetricDataCommand).resolves({
      MetricDataResults: [
        series('memoryUtilized0', [
          [1, 200],
          [2, 210],
        ]),
        series('memoryUtilized1', [
          [0, 90],
          [1, 95],
        ]),
      ],
    });
    // Act
    const minutes = await history.historyOf(query([CURRENT_TASK, EARLIER_TASK]));
    // Assess
    expect(cloudWatchMock.calls()).toHaveLength(1);
    const taskIds = cloudWatchMock
      .commandCalls(GetMetricDataCommand)[0]!
      .args[0].input.MetricDataQueries?.map((q) => q.MetricStat?.Metric?.Dimensions?.find((d) => d.Name === 'TaskId')?.Value);
    expect(new Set(taskIds)).toEqual(new Set(['0123456789abcdef0123456789abcdef', 'fedcba9876543210fedcba9876543210']));
    expect(minutes.map((point) => [point.minute, point.memoryUsedMb])).toEqual([
      [minute(0).getTime(), 90],
      [minute(1).getTime(), 200],
      [minute(2).getTime(), 210],
    ]);
  });

  it('fetches a container’s history at most once a minute: 10 open pages asking at once and again make one call', async () => {
    // Prepare
    cloudWatchMock.on(GetMetricDataCommand).callsFake(async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return { MetricDataResults: [series('memoryUtilized0', [[59, 64]])] };
    });
    // Act
    const pages = await Promise.all(Array.from({ length: 10 }, () => history.historyOf(query([CURRENT_TASK]))));
    clock += 59_000;
    const later = await history.historyOf({ ...query([CURRENT_TASK]), start: START + 59_000, end: END + 59_000 });
    // Assess
    expect(pages.every((page) => JSON.stringify(page) === JSON.stringify(pages[0]))).toBe(true);
    expect(later).toEqual(pages[0]);
    expect(cloudWatchMock.commandCalls(GetMetricDataCommand)).toHaveLength(1);

    // A minute on, or another task list, is a new call.
    clock += 1_000;
    await history.historyOf({ ...query([CURRENT_TASK]), start: START + 60_000, end: END + 60_000 });
    await history.historyOf(query([CURRENT_TASK, EARLIER_TASK]));
    expect(cloudWatchMock.commandCalls(GetMetricDataCommand)).toHaveLength(3);
  });

  it('answers 429 with Retry-After when CloudWatch throttles GetMetricData', async () => {
    // Prepare: CloudWatch's throttling error is named Throttling (HTTP 400, "Rate exceeded").
    cloudWatchMock.on(GetMetricDataCommand).rejects(Object.assign(new Error('Rate exceeded'), { name: 'Throttling' }));
    // Act
    const error = await history.historyOf(query([CURRENT_TASK])).catch((thrown: unknown) => thrown);
    // Assess
    expect(error).toMatchObject({ statusCode: 429, code: 'RATE_LIMITED', headers: { 'Retry-After': '5' } });
  });
});
