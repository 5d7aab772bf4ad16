import {
  CloudWatchLogsClient,
  DescribeLogStreamsCommand,
  FilterLogEventsCommand,
  GetLogEventsCommand,
} from '@aws-sdk/client-cloudwatch-logs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { BadRequestError } from '../../../lib/errors.js';
import { CloudWatchContainerLogs } from '../../../lib/aws/cloudwatch-logs.js';

const logsMock = mockClient(CloudWatchLogsClient);
const reader = new CloudWatchContainerLogs({ logGroupName: 'workload-logs', streamPrefix: 'app', containerName: 'app' });

const CONTAINER_ID = '0190a3e4-5b6c-7d8e-9f01-23456789abcd';
const taskArn = (id: string) => `arn:aws:ecs:us-east-1:123456789012:task/workloads/${id}`;
// Newest first, as the container keeps them.
const TASKS = [taskArn('task3'), taskArn('task2'), taskArn('task1')];
const T0 = Date.parse('2026-11-23T12:00:00.000Z');
const event = (second: number, message: string, eventId = `e${second}`) => ({ timestamp: T0 + second * 1000, message, eventId });
const line = (second: number, message: string) => ({ timestamp: new Date(T0 + second * 1000).toISOString(), stream: 'stdout', message });
const notFound = () => Object.assign(new Error('The specified log stream does not exist.'), { name: 'ResourceNotFoundException' });

beforeEach(() => {
  logsMock.reset();
});

describe('CloudWatchContainerLogs, the last lines', () => {
  it('reads each task’s stream app/app/<task id> from its end, newest task first, until it has `limit` lines, oldest first', async () => {
    logsMock
      .on(GetLogEventsCommand, { logStreamName: 'app/app/task3' })
      .resolves({ events: [event(30, 'third task a'), event(31, 'third task b')] })
      .on(GetLogEventsCommand, { logStreamName: 'app/app/task2' })
      .resolves({ events: [event(20, 'second task a'), event(21, 'second task b')] });

    const page = await reader.read({ containerId: CONTAINER_ID, taskIds: TASKS, limit: 3 });

    expect(page).toEqual({ lines: [line(21, 'second task b'), line(30, 'third task a'), line(31, 'third task b')] });
    expect(logsMock.calls().map((call) => call.args[0].input)).toEqual([
      { logGroupName: 'workload-logs', logStreamName: 'app/app/task3', startFromHead: false, limit: 3 },
      { logGroupName: 'workload-logs', logStreamName: 'app/app/task2', startFromHead: false, limit: 1 },
    ]);
  });

  it('skips the stream of a task that wrote nothing or is past the retention, and answers [] when no stream has lines', async () => {
    logsMock
      .on(GetLogEventsCommand, { logStreamName: 'app/app/task3' })
      .rejects(notFound())
      .on(GetLogEventsCommand, { logStreamName: 'app/app/task2' })
      .resolves({ events: [] })
      .on(GetLogEventsCommand, { logStreamName: 'app/app/task1' })
      .rejects(notFound());

    expect(await reader.read({ containerId: CONTAINER_ID, taskIds: TASKS, limit: 100 })).toEqual({ lines: [] });
    expect(logsMock.calls().map((call) => call.args[0].input)).toEqual(
      ['task3', 'task2', 'task1'].map((id) => ({
        logGroupName: 'workload-logs',
        logStreamName: `app/app/${id}`,
        startFromHead: false,
        limit: 100,
      })),
    );
  });

  it('follows nextBackwardToken through short and empty pages until `limit` lines or the stream’s start', async () => {
    // As CloudWatch answers: a page may be empty or short while older events exist; at the start the token comes back unchanged.
    logsMock
      .on(GetLogEventsCommand, { logStreamName: 'app/app/task3', nextToken: undefined })
      .resolves({ events: [], nextBackwardToken: 'b/1', nextForwardToken: 'f/0' })
      .on(GetLogEventsCommand, { logStreamName: 'app/app/task3', nextToken: 'b/1' })
      .resolves({ events: [event(32, 'newest')], nextBackwardToken: 'b/2', nextForwardToken: 'f/1' })
      .on(GetLogEventsCommand, { logStreamName: 'app/app/task3', nextToken: 'b/2' })
      .resolves({ events: [event(30, 'older'), event(31, 'old')], nextBackwardToken: 'b/3', nextForwardToken: 'f/2' })
      .on(GetLogEventsCommand, { logStreamName: 'app/app/task3', nextToken: 'b/3' })
      .resolves({ events: [], nextBackwardToken: 'b/3', nextForwardToken: 'f/3' })
      .on(GetLogEventsCommand, { logStreamName: 'app/app/task2' })
      .resolves({ events: [event(20, 'previous task')], nextBackwardToken: 'c/1', nextForwardToken: 'g/1' })
      .on(GetLogEventsCommand, { logStreamName: 'app/app/task2', nextToken: 'c/1' })
      .resolves({ events: [], nextBackwardToken: 'c/1', nextForwardToken: 'g/1' });

    const three = await reader.read({ containerId: CONTAINER_ID, taskIds: TASKS.slice(0, 1), limit: 3 });
    const all = await reader.read({ containerId: CONTAINER_ID, taskIds: TASKS.slice(0, 2), limit: 10 });

    expect(three).toEqual({ lines: [line(30, 'older'), line(31, 'old'), line(32, 'newest')] });
    expect(all).toEqual({ lines: [line(20, 'previous task'), line(30, 'older'), line(31, 'old'), line(32, 'newest')] });
  });

  it('passes other CloudWatch Logs errors on', async () => {
    logsMock.on(GetLogEventsCommand).rejects(Object.assign(new Error('denied'), { name: 'AccessDeniedException' }));

    await expect(reader.read({ containerId: CONTAINER_ID, taskIds: TASKS, limit: 5 })).rejects.toThrow('denied');
    expect(logsMock.calls()).toHaveLength(1);
  });
});

describe('CloudWatchContainerLogs from `since` on, and the next pages', () => {
  const filterInput = (startTime: number, limit: number, nextToken?: string) => ({
    logGroupName: 'workload-logs',
    logStreamNames: ['app/app/task3', 'app/app/task2', 'app/app/task1'],
    startTime,
    limit,
    ...(nextToken ? { nextToken } : {}),
  });

  it('answers the first `limit` lines at or after `since` across the tasks, and a cursor that continues after the last one', async () => {
    logsMock
      .on(FilterLogEventsCommand)
      .resolvesOnce({ events: [event(10, 'a')], nextToken: 'page-2' })
      .resolvesOnce({ events: [], nextToken: 'page-3' })
      .resolvesOnce({ events: [event(11, 'b', 'b1'), event(11, 'c', 'c1'), event(12, 'd')], nextToken: 'page-4' });

    const first = await reader.read({ containerId: CONTAINER_ID, taskIds: TASKS, limit: 3, since: new Date(T0 + 10_000).toISOString() });

    expect(first.lines).toEqual([line(10, 'a'), line(11, 'b'), line(11, 'c')]);
    expect(first.nextCursor).toBeDefined();
    expect(logsMock.calls().map((call) => call.args[0].input)).toEqual([
      filterInput(T0 + 10_000, 4),
      filterInput(T0 + 10_000, 4, 'page-2'),
      filterInput(T0 + 10_000, 4, 'page-3'),
    ]);

    // The next page starts at the last line's instant and skips what was answered of it.
    logsMock.reset();
    logsMock
      .on(FilterLogEventsCommand)
      .resolves({ events: [event(11, 'b', 'b1'), event(11, 'c', 'c1'), event(11, 'c2', 'c2'), event(12, 'd')] });

    const second = await reader.read({ containerId: CONTAINER_ID, taskIds: TASKS, limit: 3, cursor: first.nextCursor });

    expect(second).toEqual({ lines: [line(11, 'c2'), line(12, 'd')] });
    expect(logsMock.calls().map((call) => call.args[0].input)).toEqual([filterInput(T0 + 11_000, 4)]);
  });

  it('answers no cursor when nothing follows, and [] when no stream exists yet', async () => {
    logsMock
      .on(FilterLogEventsCommand)
      .resolvesOnce({ events: [event(1, 'only')] })
      .rejects(notFound());
    logsMock.on(DescribeLogStreamsCommand).resolves({ logStreams: [] });

    const page = await reader.read({ containerId: CONTAINER_ID, taskIds: TASKS, limit: 10, since: new Date(T0).toISOString() });
    const none = await reader.read({ containerId: CONTAINER_ID, taskIds: TASKS, limit: 10, since: new Date(T0).toISOString() });

    expect(page).toEqual({ lines: [line(1, 'only')] });
    expect(none).toEqual({ lines: [] });
    expect(logsMock.calls().map((call) => call.args[0].input)).toEqual([
      filterInput(T0, 11),
      filterInput(T0, 11),
      ...['task3', 'task2', 'task1'].map((id) => ({ logGroupName: 'workload-logs', logStreamNamePrefix: `app/app/${id}`, limit: 1 })),
    ]);
  });

  it('reads the streams that exist when a task never wrote a line (FilterLogEvents refuses a missing named stream)', async () => {
    logsMock
      .on(FilterLogEventsCommand, { logStreamNames: ['app/app/task3', 'app/app/task2', 'app/app/task1'] })
      .rejects(notFound())
      .on(FilterLogEventsCommand, { logStreamNames: ['app/app/task2', 'app/app/task1'] })
      .resolves({ events: [event(5, 'from task 1'), event(25, 'from task 2')] })
      .on(DescribeLogStreamsCommand, { logStreamNamePrefix: 'app/app/task3' })
      .resolves({ logStreams: [] })
      .on(DescribeLogStreamsCommand, { logStreamNamePrefix: 'app/app/task2' })
      .resolves({ logStreams: [{ logStreamName: 'app/app/task2' }] })
      .on(DescribeLogStreamsCommand, { logStreamNamePrefix: 'app/app/task1' })
      .resolves({ logStreams: [{ logStreamName: 'app/app/task1' }] });

    const page = await reader.read({ containerId: CONTAINER_ID, taskIds: TASKS, limit: 10, since: new Date(T0).toISOString() });

    expect(page).toEqual({ lines: [line(5, 'from task 1'), line(25, 'from task 2')] });
  });

  it('gives a cursor after pages that came back empty with a nextToken, and goes on from that token', async () => {
    logsMock.on(FilterLogEventsCommand).resolves({ events: [], nextToken: 'deep' });

    const empty = await reader.read({ containerId: CONTAINER_ID, taskIds: TASKS, limit: 5, since: new Date(T0).toISOString() });

    expect(empty.lines).toEqual([]);
    expect(empty.nextCursor).toBeDefined();
    expect(logsMock.calls()).toHaveLength(10);

    logsMock.reset();
    logsMock.on(FilterLogEventsCommand).resolves({ events: [event(40, 'at last')] });
    const next = await reader.read({ containerId: CONTAINER_ID, taskIds: TASKS, limit: 5, cursor: empty.nextCursor });

    expect(next).toEqual({ lines: [line(40, 'at last')] });
    expect(logsMock.calls().map((call) => call.args[0].input)).toEqual([filterInput(T0, 6, 'deep')]);
  });

  it('refuses a cursor it did not give with 400, asking CloudWatch nothing', async () => {
    await expect(reader.read({ containerId: CONTAINER_ID, taskIds: TASKS, limit: 10, cursor: 'not-a-cursor' })).rejects.toBeInstanceOf(
      BadRequestError,
    );
    expect(logsMock.calls()).toHaveLength(0);
  });
});
