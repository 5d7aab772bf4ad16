import { CloudWatchLogsClient, GetLogEventsCommand, ThrottlingException } from '@aws-sdk/client-cloudwatch-logs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { BadRequestError, RateLimitedError } from '../../../lib/errors.js';
import { CloudWatchContainerLogs } from '../../../lib/aws/cloudwatch-logs.js';

const logsMock = mockClient(CloudWatchLogsClient);
const SETTINGS = { logGroupName: 'workload-logs', streamPrefix: 'app', containerName: 'app' };
let clock = 0;
// A new reader per test: each keeps its own shared reads and what it learnt of streams, as one Lambda container does.
let reader: CloudWatchContainerLogs;

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
  clock = T0 + 25_000;
  reader = new CloudWatchContainerLogs(SETTINGS, new CloudWatchLogsClient({ region: 'us-east-1' }), { now: () => clock });
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
  const forward = (stream: string, startTime: number, limit: number, nextToken?: string) => ({
    logGroupName: 'workload-logs',
    logStreamName: `app/app/${stream}`,
    startFromHead: true,
    startTime,
    limit,
    ...(nextToken ? { nextToken } : {}),
  });
  const lastEvent = (stream: string) => ({
    logGroupName: 'workload-logs',
    logStreamName: `app/app/${stream}`,
    startFromHead: false,
    limit: 1,
  });
  const inputs = () => logsMock.calls().map((call) => call.args[0].input);
  const since = (second: number) => new Date(T0 + second * 1000).toISOString();

  it('reads the live task’s own stream with GetLogEvents from `since`, and a cursor continues after the last line answered', async () => {
    logsMock
      .on(GetLogEventsCommand)
      .resolvesOnce({ events: [event(10, 'a'), event(11, 'b'), event(11, 'c'), event(12, 'd')], nextForwardToken: 'f/1' });

    const first = await reader.read({ containerId: CONTAINER_ID, taskIds: TASKS.slice(0, 1), limit: 3, since: since(10) });

    expect(first.lines).toEqual([line(10, 'a'), line(11, 'b'), line(11, 'c')]);
    expect(first.nextCursor).toBeDefined();
    expect(inputs()).toEqual([forward('task3', T0 + 10_000, 4)]);

    // The next page starts at the last line's millisecond and skips the two answered of it.
    logsMock.reset();
    logsMock.on(GetLogEventsCommand).resolves({ events: [event(11, 'b'), event(11, 'c'), event(11, 'c2'), event(12, 'd')] });
    const second = await reader.read({ containerId: CONTAINER_ID, taskIds: TASKS.slice(0, 1), limit: 3, cursor: first.nextCursor });

    expect(second).toEqual({ lines: [line(11, 'c2'), line(12, 'd')] });
    expect(inputs()).toEqual([forward('task3', T0 + 11_000, 6)]);
  });

  it('follows nextForwardToken over empty pages until the token comes back as sent, and answers no cursor at the end', async () => {
    logsMock
      .on(GetLogEventsCommand, { nextToken: undefined })
      .resolves({ events: [], nextForwardToken: 'f/1' })
      .on(GetLogEventsCommand, { nextToken: 'f/1' })
      .resolves({ events: [event(5, 'late')], nextForwardToken: 'f/2' })
      .on(GetLogEventsCommand, { nextToken: 'f/2' })
      .resolves({ events: [], nextForwardToken: 'f/2' });

    const page = await reader.read({ containerId: CONTAINER_ID, taskIds: TASKS.slice(0, 1), limit: 10, since: since(0) });

    expect(page).toEqual({ lines: [line(5, 'late')] });
    expect(inputs()).toEqual([forward('task3', T0, 11), forward('task3', T0, 11, 'f/1'), forward('task3', T0, 10, 'f/2')]);
  });

  it('reads an earlier task’s stream only when its last event is at or after `since`, and remembers a quiet one', async () => {
    // task1 ended long ago; task2 (replaced, still draining) wrote after `since`; task3 is current.
    logsMock
      .on(GetLogEventsCommand, { logStreamName: 'app/app/task1', startFromHead: false })
      .resolves({ events: [event(-3600, 'old task, last line')] })
      .on(GetLogEventsCommand, { logStreamName: 'app/app/task2', startFromHead: false })
      .resolves({ events: [event(21, 'draining')] })
      .on(GetLogEventsCommand, { logStreamName: 'app/app/task2', startFromHead: true })
      .resolves({ events: [event(20, 'old a'), event(21, 'draining')] })
      .on(GetLogEventsCommand, { logStreamName: 'app/app/task3', startFromHead: true })
      .resolves({ events: [event(20, 'new a'), event(22, 'new b')] });
    const query = { containerId: CONTAINER_ID, taskIds: TASKS, liveTaskIds: [TASKS[0]!], limit: 10, since: since(20) };

    const page = await reader.read(query);

    // Merged by time; at the same millisecond the earlier task's line comes first.
    expect(page).toEqual({ lines: [line(20, 'old a'), line(20, 'new a'), line(21, 'draining'), line(22, 'new b')] });
    expect(inputs()).toEqual([
      lastEvent('task1'),
      lastEvent('task2'),
      forward('task2', T0 + 20_000, 11),
      forward('task3', T0 + 20_000, 11),
    ]);

    // A minute later: task1's end is known for good (quiet for over 10 minutes); task2's is looked up again.
    logsMock.resetHistory();
    clock += 60_000;
    await reader.read({ ...query, since: since(22) });
    expect(inputs()).toEqual([lastEvent('task2'), forward('task3', T0 + 22_000, 11)]);
  });

  it('answers [] when the live task wrote nothing yet (no stream)', async () => {
    logsMock.on(GetLogEventsCommand).rejects(notFound());

    expect(await reader.read({ containerId: CONTAINER_ID, taskIds: TASKS.slice(0, 1), limit: 10, since: since(0) })).toEqual({
      lines: [],
    });
  });

  it('shares one read among concurrent and repeated followers of a container within the share interval (10 reads, 1 call)', async () => {
    logsMock.on(GetLogEventsCommand).callsFake(async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return { events: [event(30, 'shared')] };
    });
    const query = { containerId: CONTAINER_ID, taskIds: TASKS.slice(0, 1), limit: 1000, since: since(30) };

    const pages = await Promise.all(Array.from({ length: 10 }, () => reader.read(query)));
    clock += 1500;
    const again = await reader.read(query);

    expect(new Set(pages.map((page) => JSON.stringify(page))).size).toBe(1);
    expect(again).toEqual(pages[0]);
    expect(logsMock.commandCalls(GetLogEventsCommand)).toHaveLength(1);

    // Past the interval the next follower asks CloudWatch again; another `since` is another read.
    clock += 600;
    await reader.read(query);
    await reader.read({ ...query, since: since(31) });
    expect(logsMock.commandCalls(GetLogEventsCommand)).toHaveLength(3);
  });

  it('answers 429 RATE_LIMITED with Retry-After when CloudWatch Logs throttles, and asks nothing more until then', async () => {
    // As CloudWatch Logs answers an account over its GetLogEvents quota: HTTP 400, ThrottlingException, "Rate exceeded".
    logsMock
      .on(GetLogEventsCommand)
      .rejectsOnce(new ThrottlingException({ message: 'Rate exceeded', $metadata: { httpStatusCode: 400 } }))
      .resolves({ events: [event(40, 'after the pause')] });
    const query = { containerId: CONTAINER_ID, taskIds: TASKS.slice(0, 1), limit: 100, since: since(40) };

    const throttled = await reader.read(query).catch((error: unknown) => error);
    clock += 1000;
    const stillWaiting = await reader.read(query).catch((error: unknown) => error);

    expect(throttled).toBeInstanceOf(RateLimitedError);
    expect((throttled as RateLimitedError).statusCode).toBe(429);
    expect((throttled as RateLimitedError).headers).toEqual({ 'Retry-After': '2' });
    expect((stillWaiting as RateLimitedError).headers).toEqual({ 'Retry-After': '1' });
    expect(logsMock.commandCalls(GetLogEventsCommand)).toHaveLength(1);

    clock += 1000;
    expect(await reader.read(query)).toEqual({ lines: [line(40, 'after the pause')] });
    expect(logsMock.commandCalls(GetLogEventsCommand)).toHaveLength(2);
  });

  it('refuses a cursor it did not give with 400, asking CloudWatch nothing', async () => {
    await expect(reader.read({ containerId: CONTAINER_ID, taskIds: TASKS, limit: 10, cursor: 'not-a-cursor' })).rejects.toBeInstanceOf(
      BadRequestError,
    );
    expect(logsMock.calls()).toHaveLength(0);
  });
});
