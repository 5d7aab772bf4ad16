import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, personalAccessToken, signedInUser } from '../support/api-client.js';
import { appRequest } from '../support/app-request.js';
import { TEST_IMAGE } from '../support/global-engine.js';
import { startTestStack, type TestStack } from '../support/local-stack.js';
import { pollUntil } from '../support/poll.js';

/*
 * A wake asks the engine to start the engine container made ahead at once, beside the commit
 * that charges the owner's quota (issue 38): here the commit loses (the owner is at the quota of
 * running vCPU), so the engine container the wake started is stopped again, the container stays
 * asleep and uncharged, and nothing of it runs. The next wake, with room again, answers the app.
 * The container is put to sleep as the idle sweep would, through the service on the stack's own
 * runtime, instead of waiting out an idle timeout.
 */
vi.hoisted(() => Object.assign(process.env, { QUOTA_MAX_RUNNING_CPU: '1.5', START_BUDGET_MS: '28000' }));

let stack: TestStack;
let token: string;

beforeAll(async () => {
  stack = await startTestStack();
  token = await personalAccessToken(stack.baseUrl, await signedInUser(stack.baseUrl));
});

afterAll(async () => {
  await stack?.close();
});

const api = (method: string, path: string, body?: unknown) => call(stack.baseUrl, method, path, { token, body });
const read = async (id: string): Promise<Record<string, any>> => (await api('GET', `/api/v1/containers/${id}`)).body.data;
const runningCpu = async (): Promise<number> => (await api('GET', '/api/v1/users/me')).body.data.quota.running_cpu;

async function runningContainer(hostname: string): Promise<{ id: string; url: string }> {
  const created = await api('POST', '/api/v1/containers', { hostname, image: TEST_IMAGE, cpu_cores: 1, idle_timeout_s: 86_400 });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const { id, url } = created.body.data;
  await pollUntil(
    () => read(id),
    (container) => container.state === 'running',
    30_000,
  );
  return { id, url };
}

/** The engine containers of a container, with whether each runs and when it last started (the engine's zero time if never). */
async function engineContainersOf(id: string): Promise<Array<{ name: string; running: boolean; startedAt: number }>> {
  const { engineClient } = await import('../../lib/local/docker-engine.js');
  const { LABEL } = await import('../../lib/local/docker-runtime.js');
  const engine = engineClient(process.env.DOCKER_HOST!);
  const listed = await engine.listContainers({ all: true, filters: { label: [`${LABEL.containerId}=${id}`] } });
  return Promise.all(
    listed.map(async (info) => {
      const { State, Name } = await engine.getContainer(info.Id).inspect();
      return { name: Name, running: State.Running, startedAt: Date.parse(State.StartedAt) };
    }),
  );
}

describe('a wake whose commit loses', () => {
  it('stops the engine container it started ahead, charges nothing, leaves the container asleep; the next wake with room answers', async () => {
    const sleeper = await runningContainer(`ahead-${process.pid}-a`);
    const { containerServiceOptions, containerStore } = await import('../../lib/wiring/containers.js');
    const { localContainers } = await import('../../lib/wiring/local-containers.js');
    const { SleepingContainerService } = await import('../../lib/containers/sleep-and-wake.js');
    const { runtime, runPolicy, usage } = localContainers();
    const service = new SleepingContainerService(containerStore, runtime, usage, containerServiceOptions({ runPolicy }));
    await service.sleep((await containerStore.get(sleeper.id))!);
    // Its task exited and the engine container of its next task was made ahead, not started.
    await pollUntil(
      () => engineContainersOf(sleeper.id),
      (containers) => containers.length === 2 && containers.every((container) => !container.running),
      20_000,
    );
    const other = await runningContainer(`ahead-${process.pid}-b`);
    expect(await runningCpu()).toBe(1);

    // Each engine container's last start before the wake: a start since is one the wake made (an idle machine
    // can bring the sleeper's first task up within a second of the wake, so no clock window tells them apart).
    const startedBefore = new Map((await engineContainersOf(sleeper.id)).map((container) => [container.name, container.startedAt]));
    const startedByWake = (containers: Array<{ name: string; startedAt: number }>) =>
      containers.filter((container) => container.startedAt !== startedBefore.get(container.name));
    const refused = await appRequest(sleeper.url);
    expect(refused.status).toBe(503);

    // The wake started the engine container made ahead (the engine's start came before the quota's answer) and stopped it again.
    const afterWake = await pollUntil(
      () => engineContainersOf(sleeper.id),
      (containers) => startedByWake(containers).length > 0 && containers.every((container) => !container.running),
      20_000,
    );
    expect(startedByWake(afterWake)).toHaveLength(1);
    expect(afterWake.every((container) => !container.running)).toBe(true);
    expect(await read(sleeper.id)).toMatchObject({ state: 'stopped', state_reason: 'idle' });
    expect(await runningCpu()).toBe(1);
    // Nothing starts it later either: the stop was the last word.
    await sleep(2_000);
    expect((await engineContainersOf(sleeper.id)).every((container) => !container.running)).toBe(true);

    expect((await api('DELETE', `/api/v1/containers/${other.id}`)).status).toBe(200);
    const woken = await pollUntil(
      () => appRequest(sleeper.url),
      (answer) => answer.status === 200,
      30_000,
    );
    expect(woken.text).toBe('served from the image\n');
    expect(await read(sleeper.id)).toMatchObject({ state: 'running' });
    expect(await runningCpu()).toBe(1);
    await api('DELETE', `/api/v1/containers/${sleeper.id}`);
  }, 120_000);
});
