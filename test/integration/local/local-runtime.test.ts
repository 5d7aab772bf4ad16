import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import type { TaskLaunch, TaskStatus } from '../../../lib/containers/runtime.js';
import { LocalMetrics } from '../../../lib/local/local-metrics.js';
import { LocalRuntime } from '../../../lib/local/local-runtime.js';
import { newId } from '../../../lib/ids.js';
import { pollUntil } from '../../support/poll.js';
import { isRunning } from '../../support/processes.js';
import { nginxWorkload } from '../../support/workloads.js';

const rootDir = process.env.LOCAL_CONTAINER_DIR!;
const runtime = new LocalRuntime({ rootDir, readyAfterMs: 200, stopGraceMs: 500 });
const seen: TaskStatus[] = [];
runtime.onTaskStatus(async (status) => {
  seen.push(status);
});
const metrics = new LocalMetrics(runtime, 100);

afterAll(() => runtime.stopAll());

/** A shell command: a Node server on $PORT that runs `then` after `afterMs`. */
const listenThen = (then: string, afterMs: number): string =>
  `exec ${JSON.stringify(process.execPath)} -e "require('http').createServer((q,r)=>r.end('ok')).listen(process.env.PORT); setTimeout(()=>{${then}}, ${afterMs})"`;

const launch = (change: Partial<TaskLaunch> = {}): TaskLaunch => {
  const containerId = newId();
  return {
    containerId,
    hostname: 'local-web',
    ...nginxWorkload(),
    clientToken: `${containerId}:1`,
    mounts: [],
    ...change,
  };
};

describe('LocalRuntime', () => {
  it('runs a container as a process that is PROVISIONING first, then RUNNING, in its own directory', async () => {
    const request = launch();

    const taskArn = await runtime.runTask(request);

    expect((await runtime.describeTask(taskArn))!.lastStatus).toBe('PROVISIONING');
    const running = await pollUntil(
      () => runtime.describeTask(taskArn),
      (status) => status?.lastStatus === 'RUNNING',
    );
    expect(running).toMatchObject({ containerId: request.containerId, lastStatus: 'RUNNING', desiredStatus: 'RUNNING', version: 2 });
    expect(running!.startedAt).toEqual(expect.any(String));
    const workDir = join(rootDir, request.containerId);
    await pollUntil(async () => existsSync(join(workDir, 'ready')), Boolean);
    expect(JSON.parse(await readFile(join(workDir, 'ready'), 'utf8'))).toMatchObject({ hostname: 'local-web' });
  });

  it('answers the same task for the same client token, starting one process', async () => {
    const request = launch();

    const [first, second] = await Promise.all([runtime.runTask(request), runtime.runTask(request)]);

    expect(second).toBe(first);
    expect(await runtime.runTask(request)).toBe(first);
  });

  it('stops the whole process group and reports STOPPED with UserInitiated', async () => {
    const taskArn = await runtime.runTask(launch());
    await pollUntil(
      () => runtime.describeTask(taskArn),
      (status) => status?.lastStatus === 'RUNNING',
    );
    const { pid } = runtime.processOf(taskArn)!;

    await runtime.stopTask(taskArn, 'test stop');

    const stopped = await pollUntil(
      () => runtime.describeTask(taskArn),
      (status) => status?.lastStatus === 'STOPPED',
    );
    expect(stopped).toMatchObject({
      lastStatus: 'STOPPED',
      desiredStatus: 'STOPPED',
      stopCode: 'UserInitiated',
      stoppedReason: 'test stop',
    });
    expect(isRunning(pid)).toBe(false);
    expect(runtime.processOf(taskArn)).toBeUndefined();
  });

  it('reports a process that exits before it could run as TaskFailedToStart', async () => {
    const failing = new LocalRuntime({ rootDir, command: 'exit 3', readyAfterMs: 200 });

    const taskArn = await failing.runTask(launch());

    const stopped = await pollUntil(
      () => failing.describeTask(taskArn),
      (status) => status?.lastStatus === 'STOPPED',
    );
    expect(stopped).toMatchObject({
      lastStatus: 'STOPPED',
      stopCode: 'TaskFailedToStart',
      stoppedReason: 'The process exited with code 3',
    });
    expect(stopped!.startedAt).toBeUndefined();
  });

  it('reports a process that exits after running as EssentialContainerExited', async () => {
    const exiting = new LocalRuntime({ rootDir, command: listenThen('process.exit(3)', 800), readyAfterMs: 100 });

    const taskArn = await exiting.runTask(launch());

    const stopped = await pollUntil(
      () => exiting.describeTask(taskArn),
      (status) => status?.lastStatus === 'STOPPED',
    );
    expect(stopped).toMatchObject({
      lastStatus: 'STOPPED',
      stopCode: 'EssentialContainerExited',
      version: 3,
      exitCode: 3,
      reason: 'exited with code 3',
    });
    expect(stopped!.startedAt).toEqual(expect.any(String));
  });

  it('is PROVISIONING until the process listens, RUNNING once it does', async () => {
    const late = new LocalRuntime({ rootDir, command: `sleep 1.5; ${listenThen('', 60_000)}`, readyAfterMs: 0 });
    const taskArn = await late.runTask(launch());

    await sleep(1000);
    expect((await late.describeTask(taskArn))!.lastStatus).toBe('PROVISIONING');
    const running = await pollUntil(
      () => late.describeTask(taskArn),
      (status) => status?.lastStatus === 'RUNNING',
      5000,
    );
    expect(running!.lastStatus).toBe('RUNNING');
    await late.stopAll();
  });

  it('ends a process that never answers within its grace period, saying so', async () => {
    const silent = new LocalRuntime({ rootDir, command: 'sleep 30', readyAfterMs: 0, stopGraceMs: 200 });
    const taskArn = await silent.runTask(launch({ healthCheck: { path: '/healthz', intervalS: 1, timeoutS: 1, graceS: 1 } }));

    const stopped = await pollUntil(
      () => silent.describeTask(taskArn),
      (status) => status?.lastStatus === 'STOPPED',
      5000,
    );
    expect(stopped).toMatchObject({
      stopCode: 'TaskFailedToStart',
      reason: expect.stringMatching(/^not ready within 1 s: GET \/healthz /),
    });
  });

  it('ends a running process after three failed health checks in a row, with the answer it gave', async () => {
    // Answers 200 three times, then 500.
    const flaky = new LocalRuntime({
      rootDir,
      command: `exec ${JSON.stringify(process.execPath)} -e "let n=0; require('http').createServer((q,r)=>{r.statusCode=++n>3?500:200;r.end()}).listen(process.env.PORT)"`,
      readyAfterMs: 0,
      stopGraceMs: 200,
    });
    const taskArn = await flaky.runTask(launch({ healthCheck: { path: '/healthz', intervalS: 1, timeoutS: 1, graceS: 5 } }));

    const stopped = await pollUntil(
      () => flaky.describeTask(taskArn),
      (status) => status?.lastStatus === 'STOPPED',
      10_000,
    );
    expect(stopped).toMatchObject({ stopCode: 'EssentialContainerExited', reason: 'health check failed: GET /healthz answered 500' });
  });

  it('stops a child that left the process group with setsid', async () => {
    const escaping = new LocalRuntime({
      rootDir,
      command: `setsid sh -c 'echo $$ > escaped.pid; exec sleep 60' & ${listenThen('', 60_000)}`,
      readyAfterMs: 0,
      stopGraceMs: 300,
    });
    const request = launch();
    const taskArn = await escaping.runTask(request);
    await pollUntil(
      () => escaping.describeTask(taskArn),
      (status) => status?.lastStatus === 'RUNNING',
    );
    const escapedFile = join(rootDir, request.containerId, 'escaped.pid');
    await pollUntil(async () => existsSync(escapedFile), Boolean);
    const escaped = Number(await readFile(escapedFile, 'utf8'));
    expect(isRunning(escaped)).toBe(true);

    await escaping.releaseContainer(request.containerId);

    await pollUntil(
      async () => isRunning(escaped),
      (alive) => !alive,
      3000,
    );
    expect(isRunning(escaped)).toBe(false);
  });

  it('substitutes {hostname} and {port} in a configured command', async () => {
    const custom = new LocalRuntime({ rootDir, command: 'echo "{hostname} {port}" > out.txt; sleep 5', readyAfterMs: 50 });
    const request = launch({ hostname: 'named-box' });

    const taskArn = await custom.runTask(request);

    const out = join(rootDir, request.containerId, 'out.txt');
    await pollUntil(async () => existsSync(out) && (await readFile(out, 'utf8')).length > 0, Boolean);
    expect(await readFile(out, 'utf8')).toMatch(/^named-box \d+\n$/);
    await custom.stopTask(taskArn, 'done');
    await custom.stopAll();
  });

  it('tells the listener every status change of a task, in version order', async () => {
    const taskArn = await runtime.runTask(launch());
    await pollUntil(
      () => runtime.describeTask(taskArn),
      (status) => status?.lastStatus === 'RUNNING',
    );
    await runtime.stopTask(taskArn, 'test stop');
    await pollUntil(
      async () => seen.filter((status) => status.taskArn === taskArn).length,
      (count) => count >= 3,
    );

    const changes = seen.filter((status) => status.taskArn === taskArn).map((status) => [status.version, status.lastStatus]);

    expect(changes).toEqual([
      [1, 'PROVISIONING'],
      [2, 'RUNNING'],
      [3, 'STOPPED'],
    ]);
  });

  it('answers undefined for a task it does not know', async () => {
    expect(await runtime.describeTask('arn:local:ecs:local:000000000000:task/local/unknown')).toBeUndefined();
    await expect(runtime.stopTask('arn:local:ecs:local:000000000000:task/local/unknown', 'x')).resolves.toBeUndefined();
  });
});

/** A process in its own group (detached), as the runtime starts them, that a test can watch exit. */
async function leftoverProcess(
  workDir: string,
  options: { ownGroup?: boolean; ownerPid?: number } = {},
): Promise<{ child: ChildProcess; pidFile: string; exited: Promise<unknown> }> {
  await mkdir(workDir, { recursive: true });
  const child = spawn('sleep', ['30'], { cwd: workDir, detached: options.ownGroup ?? true, stdio: 'ignore' });
  const exited = new Promise((resolveExit) => child.once('exit', resolveExit));
  const pidFile = join(workDir, `process-${child.pid}.pid`);
  // The pid and, as the runtime writes it, the pid of the process that started it; an earlier run's owner is gone.
  await writeFile(pidFile, `${child.pid}\n${options.ownerPid ?? 999_999_999}\n`);
  return { child, pidFile, exited };
}

describe('LocalRuntime across restarts', () => {
  it('keeps a pid file for each running process in its container directory, and removes it when the process exits', async () => {
    const request = launch();
    const taskArn = await runtime.runTask(request);
    const { pid } = runtime.processOf(taskArn)!;
    const workDir = join(rootDir, request.containerId);

    // The process, and the process that owns it: this one.
    expect(await readFile(join(workDir, `process-${pid}.pid`), 'utf8')).toBe(`${pid}\n${process.pid}\n`);
    await runtime.stopTask(taskArn, 'test stop');
    await pollUntil(
      () => runtime.describeTask(taskArn),
      (status) => status?.lastStatus === 'STOPPED',
    );

    expect((await readdir(workDir)).filter((name) => name.endsWith('.pid'))).toEqual([]);
  });

  it('kills the process groups an earlier run left behind, as their pid files record them', async () => {
    const fresh = new LocalRuntime({ rootDir, readyAfterMs: 200 });
    const leftover = await leftoverProcess(join(rootDir, newId()));

    const killed = await fresh.killLeftoverProcesses();

    expect(killed).toBe(1);
    await expect(Promise.race([leftover.exited.then(() => 'exited'), sleep(2000).then(() => 'still running')])).resolves.toBe('exited');
    expect(existsSync(leftover.pidFile)).toBe(false);
  });

  it('leaves alone a recorded pid that no longer leads its own group, or started after the file was written', async () => {
    const fresh = new LocalRuntime({ rootDir, readyAfterMs: 200 });
    const notLeader = await leftoverProcess(join(rootDir, newId()), { ownGroup: false });
    const reused = await leftoverProcess(join(rootDir, newId()));
    // A file from an hour ago names a process that started just now: the pid was reused.
    const anHourAgo = new Date(Date.now() - 3_600_000);
    await utimes(reused.pidFile, anHourAgo, anHourAgo);

    const killed = await fresh.killLeftoverProcesses();

    expect(killed).toBe(0);
    expect(isRunning(notLeader.child.pid!)).toBe(true);
    expect(isRunning(reused.child.pid!)).toBe(true);
    expect(existsSync(notLeader.pidFile) || existsSync(reused.pidFile)).toBe(false);
    notLeader.child.kill('SIGKILL');
    reused.child.kill('SIGKILL');
  });

  it('leaves alone the processes of a stack that is still running, this one included', async () => {
    const fresh = new LocalRuntime({ rootDir, readyAfterMs: 200 });
    const ownedByLiveStack = await leftoverProcess(join(rootDir, newId()), { ownerPid: process.ppid });
    const taskArn = await runtime.runTask(launch());
    const { pid } = runtime.processOf(taskArn)!;

    const killed = await fresh.killLeftoverProcesses();

    expect(killed).toBe(0);
    expect(isRunning(ownedByLiveStack.child.pid!)).toBe(true);
    expect(existsSync(ownedByLiveStack.pidFile)).toBe(true);
    expect(isRunning(pid)).toBe(true);
    ownedByLiveStack.child.kill('SIGKILL');
  });

  it('knows no tasks when fresh, and every task it started', async () => {
    const fresh = new LocalRuntime({ rootDir, readyAfterMs: 200 });
    expect(fresh.knownTaskArns().size).toBe(0);

    const taskArn = await fresh.runTask(launch());

    expect([...fresh.knownTaskArns()]).toEqual([taskArn]);
    await fresh.stopAll();
  });

  it('releases a container: its process is gone, then its directory', async () => {
    const request = launch();
    const taskArn = await runtime.runTask(request);
    await pollUntil(
      () => runtime.describeTask(taskArn),
      (status) => status?.lastStatus === 'RUNNING',
    );
    const { pid } = runtime.processOf(taskArn)!;

    await runtime.stopTask(taskArn, 'Container deleted through the API');
    await runtime.releaseContainer(request.containerId);

    expect(isRunning(pid)).toBe(false);
    expect(existsSync(join(rootDir, request.containerId))).toBe(false);
    expect(await runtime.describeTask(taskArn)).toBeUndefined();
  });

  it('refuses to release anything outside its root directory', async () => {
    await expect(runtime.releaseContainer('../escape')).rejects.toThrow('Not a container id');
  });
});

describe('LocalMetrics', () => {
  it('measures a running process: real resident memory, CPU within 0..100, and the bytes in its directory', async () => {
    const taskArn = await runtime.runTask(launch());
    await pollUntil(
      () => runtime.describeTask(taskArn),
      (status) => status?.lastStatus === 'RUNNING',
    );

    const usage = await metrics.usageOf({ taskArn, containerId: 'x', cpuCores: 1 });

    expect(usage.memoryUsedMb).toBeGreaterThan(5);
    expect(usage.cpuPercent).toBeGreaterThanOrEqual(0);
    expect(usage.cpuPercent).toBeLessThanOrEqual(100);
    expect(usage.diskUsedGb).toBeGreaterThan(0);
  });

  it('counts the CPU a busy process burns against its core allocation', async () => {
    const busy = new LocalRuntime({ rootDir, command: `"${process.execPath}" -e "for(;;){}"`, readyAfterMs: 50 });
    const busyMetrics = new LocalMetrics(busy, 300);
    const busyTask = await busy.runTask(launch());
    const idleTask = await runtime.runTask(launch());
    await pollUntil(
      () => busy.describeTask(busyTask),
      (status) => status?.lastStatus === 'RUNNING',
    );
    await pollUntil(
      () => runtime.describeTask(idleTask),
      (status) => status?.lastStatus === 'RUNNING',
    );

    const oneCore = await busyMetrics.usageOf({ taskArn: busyTask, containerId: 'x', cpuCores: 1 });
    const twoCores = await busyMetrics.usageOf({ taskArn: busyTask, containerId: 'x', cpuCores: 2 });
    const idle = await metrics.usageOf({ taskArn: idleTask, containerId: 'x', cpuCores: 1 });
    await busy.stopAll();

    // A single-threaded loop uses at most one core: all of a 1-core allocation, half of a 2-core one.
    // How much it gets depends on the machine's load, so only the bounds are exact.
    expect(oneCore.cpuPercent).toBeGreaterThan(idle.cpuPercent + 5);
    expect(twoCores.cpuPercent).toBeGreaterThan(0);
    expect(twoCores.cpuPercent).toBeLessThanOrEqual(55);
  });

  it('reports zeros for a task with no live process', async () => {
    const taskArn = await runtime.runTask(launch());
    await runtime.stopTask(taskArn, 'stop');
    await pollUntil(
      () => runtime.describeTask(taskArn),
      (status) => status?.lastStatus === 'STOPPED',
    );

    expect(await metrics.usageOf({ taskArn, containerId: 'x', cpuCores: 1 })).toEqual({ cpuPercent: 0, memoryUsedMb: 0, diskUsedGb: 0 });
  });
});
