import { GetLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import {
  DescribeTasksCommand,
  ListTasksCommand,
  RegisterTaskDefinitionCommand,
  RunTaskCommand,
  StopTaskCommand,
} from '@aws-sdk/client-ecs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ecsClient } from '../../../lib/aws/ecs-runtime.js';
import type { TaskLaunch } from '../../../lib/containers/runtime.js';
import { newId } from '../../../lib/ids.js';
import { type AwsSim, startAwsSim } from '../../support/aws-sim/index.js';
import { SIM_REGISTRY } from '../../support/aws-sim/ecr.js';
import { pollUntil } from '../../support/poll.js';
import { accepts, burst, clientsFor, runtimeOn, runtimeSettings } from './support.js';
import { simTaskLaunch } from '../../support/workloads.js';

/*
 * The ECS simulator through the real SDK v3 client (awsJson1_1): the task lifecycle with real
 * listeners on loopback addresses, stop codes and exit codes, the concurrent-revision error and
 * throttling. The module's own ECS client (lib/aws/ecs-runtime.ts) reaches it through
 * AWS_ENDPOINT_URL_ECS.
 */
let sim: AwsSim;

beforeAll(async () => {
  sim = await startAwsSim({ seed: 7, ecs: { provisioningMs: [400, 500], pendingMs: [100, 200], registerMs: 300 } });
});

afterAll(() => sim?.close());

const launch = (env: Record<string, string> = {}, image = 'sim/app:1'): TaskLaunch => simTaskLaunch({ image, env });

async function statusOf(taskArn: string, done: (status: Record<string, any>) => boolean, timeoutMs = 8000) {
  const ecs = clientsFor(sim).ecs;
  return pollUntil(
    async () =>
      (await ecs.send(new DescribeTasksCommand({ cluster: runtimeSettings.clusterArn, tasks: [taskArn] }))).tasks![0]! as Record<
        string,
        any
      >,
    done,
    timeoutMs,
  );
}

describe('ECS tasks', () => {
  it('go PROVISIONING → PENDING → RUNNING after a delay, each change a newer version, and answer on their own address', async () => {
    const runtime = runtimeOn(sim);
    const taskArn = await runtime.runTask(launch({ SIM_BODY: 'hello' }));
    const first = await runtime.describeTask(taskArn);
    expect(first).toMatchObject({ lastStatus: 'PROVISIONING', version: 1 });

    const running = await statusOf(taskArn, (task) => task.lastStatus === 'RUNNING');
    expect(running.lastStatus).toBe('RUNNING');
    const ip = running.attachments[0].details.find((d: { name: string }) => d.name === 'privateIPv4Address').value;
    expect(ip).toMatch(/^127\.\d+\.\d+\.\d+$/);
    expect(ip).not.toBe('127.0.0.1');
    const answer = await pollUntil(
      () =>
        fetch(`http://${ip}:8080/`).then(
          (r) => r.text(),
          () => '',
        ),
      (text) => text === 'hello',
    );
    expect(answer).toBe('hello');

    const events = sim.taskEvents.delivered.filter((event) => event.taskArn === taskArn);
    expect(events.map((event) => event.lastStatus)).toEqual(['PROVISIONING', 'PENDING', 'RUNNING']);
    expect(events.map((event) => event.version)).toEqual([1, 2, 3]);

    await runtime.stopTask(taskArn, 'stopped on request');
    const stopped = await statusOf(taskArn, (task) => task.lastStatus === 'STOPPED');
    expect(stopped).toMatchObject({
      lastStatus: 'STOPPED',
      desiredStatus: 'STOPPED',
      stopCode: 'UserInitiated',
      stoppedReason: 'stopped on request',
    });
    expect(stopped.containers[0].exitCode).toBe(0);
    expect(await accepts(ip, 8080)).toBe(false);
  });

  it('is RUNNING before its container listens: a late listener refuses connections at first', async () => {
    const runtime = runtimeOn(sim);
    const taskArn = await runtime.runTask(launch({ SIM_LISTEN_AFTER_MS: '1500' }));
    const running = await statusOf(taskArn, (task) => task.lastStatus === 'RUNNING');
    const ip = running.containers[0].networkInterfaces[0].privateIpv4Address;
    expect(await accepts(ip, 8080)).toBe(false);
    expect(await pollUntil(() => accepts(ip, 8080), Boolean, 15_000)).toBe(true);
    await runtime.stopTask(taskArn, 'done');
  });

  it('stops with EssentialContainerExited and the exit code when its container exits', async () => {
    const runtime = runtimeOn(sim);
    const taskArn = await runtime.runTask(launch({ SIM_EXIT_AFTER_MS: '200', SIM_EXIT_CODE: '3' }));
    await statusOf(taskArn, (task) => task.lastStatus === 'STOPPED');
    expect(await runtime.describeTask(taskArn)).toMatchObject({
      lastStatus: 'STOPPED',
      stopCode: 'EssentialContainerExited',
      exitCode: 3,
      reason: 'exited with code 3',
    });
  });

  it('reports an OOM kill as OutOfMemoryError with exit code 137', async () => {
    const runtime = runtimeOn(sim);
    const taskArn = await runtime.runTask(launch({ SIM_OOM_AFTER_MS: '200' }));
    await statusOf(taskArn, (task) => task.lastStatus === 'STOPPED');
    const status = await runtime.describeTask(taskArn);
    expect(status).toMatchObject({ stopCode: 'EssentialContainerExited', exitCode: 137 });
    expect(status?.reason).toMatch(/^out of memory/);
  });

  it('answers the health check with the status it is told to, and never listens when told so', async () => {
    const runtime = runtimeOn(sim);
    const unhealthy = await runtime.runTask(launch({ SIM_HEALTH_STATUS: '500' }));
    const silent = await runtime.runTask(launch({ SIM_NEVER_LISTEN: 'true' }));
    const ipOf = async (arn: string) =>
      (await statusOf(arn, (task) => task.lastStatus === 'RUNNING')).containers[0].networkInterfaces[0].privateIpv4Address;
    const unhealthyIp = await ipOf(unhealthy);
    const status = await pollUntil(
      () =>
        fetch(`http://${unhealthyIp}:8080/healthz`).then(
          (r) => r.status,
          () => 0,
        ),
      (s) => s !== 0,
    );
    expect(status).toBe(500);
    const silentIp = await ipOf(silent);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await accepts(silentIp, 8080)).toBe(false);
    expect(sim.ecs.liveProcesses().some((task) => task.taskArn === silent)).toBe(true);
    await runtime.stopTask(unhealthy, 'done');
    await runtime.stopTask(silent, 'done');
  });

  it('answers the task a retried RunTask with the same clientToken first created', async () => {
    const runtime = runtimeOn(sim);
    const same = launch();
    const [a, b] = [await runtime.runTask(same), await runtime.runTask(same)];
    expect(b).toBe(a);
    await runtime.stopTask(a, 'done');
  });

  it('lists only tasks whose desired status is RUNNING, and DescribeTasks reports unknown tasks as MISSING failures', async () => {
    const runtime = runtimeOn(sim);
    const kept = await runtime.runTask(launch());
    const stopped = await runtime.runTask(launch());
    await runtime.stopTask(stopped, 'gone');
    const { taskArns } = await runtime.listTasks();
    expect(taskArns).toContain(kept);
    expect(taskArns).not.toContain(stopped);
    const output = await clientsFor(sim).ecs.send(
      new DescribeTasksCommand({ cluster: runtimeSettings.clusterArn, tasks: ['arn:aws:ecs:us-east-1:123456789012:task/workloads/nope'] }),
    );
    expect(output.failures).toEqual([{ arn: 'arn:aws:ecs:us-east-1:123456789012:task/workloads/nope', reason: 'MISSING' }]);
    await runtime.stopTask(kept, 'done');
  });

  it("reports the digest its image's tag resolved to on ECR, in DescribeTasks and in its events, and a moved tag's new digest for the next task only", async () => {
    // Prepare: an image of the pull-through cache (ECR-hosted) and one of another registry
    const runtime = runtimeOn(sim);
    const cached = `${SIM_REGISTRY}/ecr-public/sim/digests:1`;
    const first = sim.ecr.upstream.digestOf('public.ecr.aws/sim/digests:1');

    // Act
    const before = await runtime.runTask(launch({}, cached));
    const other = await runtime.runTask(launch({}, 'registry.example.com/sim/digests:1'));
    const running = await statusOf(before, (task) => task.lastStatus === 'RUNNING');
    const moved = sim.ecr.upstream.moveTag('public.ecr.aws/sim/digests:1');
    const after = await runtime.runTask(launch({ SIM_BODY: 'after' }, cached));
    const next = await statusOf(after, (task) => task.lastStatus === 'RUNNING');
    const otherRunning = await statusOf(other, (task) => task.lastStatus === 'RUNNING');

    // Assess: the SDK's DescribeTasks output, the event detail, and the domain's status
    expect(running.containers[0]).toMatchObject({ name: 'app', image: cached, imageDigest: first });
    expect(next.containers[0]).toMatchObject({ image: cached, imageDigest: moved });
    expect(moved).not.toBe(first);
    expect(otherRunning.containers[0].image).toBe('registry.example.com/sim/digests:1');
    expect(otherRunning.containers[0]).not.toHaveProperty('imageDigest');
    const runningEvent = sim.taskEventQueue.messages
      .map((message) => JSON.parse(message.body))
      .find((event) => event.detail.taskArn === before && event.detail.lastStatus === 'RUNNING');
    expect(runningEvent.detail.containers[0]).toMatchObject({ image: cached, imageDigest: first });
    expect(await runtime.describeTask(before)).toMatchObject({ lastStatus: 'RUNNING', imageDigest: first });
    expect(await runtime.describeTask(other)).not.toHaveProperty('imageDigest');
    for (const taskArn of [before, after, other]) await runtime.stopTask(taskArn, 'done');
  });

  it('is what the module-level ECS client reaches through AWS_ENDPOINT_URL_ECS', async () => {
    const before = sim.ecs.calls.get('ListTasks') ?? 0;
    await ecsClient.send(new ListTasksCommand({ cluster: runtimeSettings.clusterArn }));
    expect(sim.ecs.calls.get('ListTasks')).toBe(before + 1);
  });
});

describe('ECS tasks with a non-essential container', () => {
  const awslogs = (prefix: string) => ({
    logDriver: 'awslogs' as const,
    options: { 'awslogs-group': 'workload-logs', 'awslogs-region': 'us-east-1', 'awslogs-stream-prefix': prefix },
  });

  /** Registers an app and a non-essential `sidecar` running `script`, and runs it with the app's environment. */
  async function runWithSidecar(script: string, env: Record<string, string> = {}): Promise<{ taskArn: string; taskId: string }> {
    const { ecs } = clientsFor(sim);
    const family = `sidecar-${newId()}`;
    const registered = await ecs.send(
      new RegisterTaskDefinitionCommand({
        family,
        requiresCompatibilities: ['FARGATE'],
        networkMode: 'awsvpc',
        cpu: '256',
        memory: '512',
        containerDefinitions: [
          { name: 'app', image: 'sim/app:1', essential: true, portMappings: [{ containerPort: 8080 }], logConfiguration: awslogs('app') },
          { name: 'sidecar', image: 'busybox', essential: false, command: ['sh', '-c', script], logConfiguration: awslogs('side') },
        ],
      }),
    );
    const run = await ecs.send(
      new RunTaskCommand({
        cluster: runtimeSettings.clusterArn,
        taskDefinition: registered.taskDefinition!.taskDefinitionArn,
        launchType: 'FARGATE',
        startedBy: newId(),
        overrides: { containerOverrides: [{ name: 'app', environment: Object.entries(env).map(([name, value]) => ({ name, value })) }] },
      }),
    );
    const taskArn = run.tasks![0]!.taskArn!;
    return { taskArn, taskId: taskArn.split('/').pop()! };
  }

  const containerNamed = (task: Record<string, any>, name: string) => task.containers.find((container: any) => container.name === name);

  it('runs the second container beside the app, its lines in its own stream; its exit ends nothing, and StopTask ends both', async () => {
    // Act
    const { taskArn, taskId } = await runWithSidecar('echo measured; exit 3');

    // Assess: the sidecar exited 3, the task runs on
    const exited = await statusOf(taskArn, (task) => containerNamed(task, 'sidecar')?.exitCode !== undefined);
    expect(exited.lastStatus).toBe('RUNNING');
    expect(containerNamed(exited, 'sidecar')).toMatchObject({ lastStatus: 'STOPPED', exitCode: 3 });
    expect(containerNamed(exited, 'app')).toMatchObject({ lastStatus: 'RUNNING' });
    const { events } = await pollUntil(
      () => clientsFor(sim).logs.send(new GetLogEventsCommand({ logGroupName: 'workload-logs', logStreamName: `side/sidecar/${taskId}` })),
      (output) => (output.events?.length ?? 0) > 0,
    );
    expect(events!.map((event) => event.message)).toEqual(['measured']);
    expect(sim.logs.streams.get(`app/app/${taskId}`)?.some((event) => event.message === 'measured') ?? false).toBe(false);

    // Act: the task is stopped
    await clientsFor(sim).ecs.send(new StopTaskCommand({ cluster: runtimeSettings.clusterArn, task: taskArn, reason: 'done' }));

    // Assess
    expect((await statusOf(taskArn, (task) => task.lastStatus === 'STOPPED')).stopCode).toBe('UserInitiated');
  });

  it("stops the task and its running second container when the app's container exits", async () => {
    // Act: the sidecar would print forever; the app exits after 800 ms
    const { taskArn } = await runWithSidecar('while true; do echo tick; sleep 0.2; done', { SIM_EXIT_AFTER_MS: '800', SIM_EXIT_CODE: '4' });

    // Assess
    const stopped = await statusOf(taskArn, (task) => task.lastStatus === 'STOPPED');
    expect(stopped.stopCode).toBe('EssentialContainerExited');
    expect(containerNamed(stopped, 'app').exitCode).toBe(4);
    await pollUntil(
      async () => sim.ecs.liveProcesses().some((task) => task.taskArn === taskArn),
      (alive) => !alive,
    );
    expect(containerNamed(await statusOf(taskArn, () => true), 'sidecar')).toMatchObject({ lastStatus: 'STOPPED', exitCode: 143 });
  });
});

describe('ECS limits', () => {
  it('refuses a second RegisterTaskDefinition for one family while the first is in progress, as ECS words it', async () => {
    const ecs = clientsFor(sim).ecs;
    const register = () =>
      ecs.send(
        new RegisterTaskDefinitionCommand({
          family: 'sim-concurrent',
          containerDefinitions: [{ name: 'app', image: 'sim/app:1', essential: true }],
        }),
      );
    const results = await Promise.allSettled([register(), register()]);
    const refused = results.filter((result) => result.status === 'rejected').map((result) => (result as PromiseRejectedResult).reason);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({
      name: 'ClientException',
      message: 'Too many concurrent attempts to create a new revision of the specified family.',
    });
  });

  // Issue 24, defect "Concurrent first launches fail": two function instances launching the first
  // task of one (image, port) at once. Fails on the code before RegisterTaskDefinition retried the
  // concurrent-revision error (main at b9f88cd, where this was it.fails).
  it('launches both first tasks of one (image, port) started at once by two function instances', async () => {
    const image = `sim/first-launch:${newId().slice(0, 6)}`;
    const results = await Promise.allSettled([runtimeOn(sim).runTask(launch({}, image)), runtimeOn(sim).runTask(launch({}, image))]);
    for (const result of results) if (result.status === 'fulfilled') await runtimeOn(sim).stopTask(result.value, 'done');
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled']);
  });

  it('throttles past its token bucket with ThrottlingException: Rate exceeded', async () => {
    const strict = await startAwsSim({ ecs: { throttle: { read: { capacity: 3, refillPerSecond: 1 } } } });
    try {
      const ecs = clientsFor(strict).ecs;
      const { refused, passed, allowed } = await burst(
        12,
        () => ecs.send(new ListTasksCommand({ cluster: runtimeSettings.clusterArn })),
        3,
        1,
      );
      expect(new Set(refused)).toEqual(new Set(['ThrottlingException']));
      expect(passed).toBeGreaterThanOrEqual(3);
      expect(passed).toBeLessThanOrEqual(allowed);
      expect(strict.faults.get('ecs.ThrottlingException.ListTasks')).toBe(refused.length);
    } finally {
      await strict.close();
      Object.assign(process.env, sim.endpointEnv());
    }
  });
});
