import { describe, expect, it, vi } from 'vitest';
import { localContainers } from '../../lib/wiring/local-containers.js';
import { containerServiceWith, containerStore } from '../../lib/wiring/containers.js';
import { useSignedInStack } from '../support/local-stack.js';
import type { LocalRuntime } from '../../lib/local/local-runtime.js';
import { pollUntil } from '../support/poll.js';
import { isRunning } from '../support/processes.js';

/*
 * The local stack's reconciler (RECONCILE_INTERVAL_MS) against real processes: the stack runs
 * in this process, so the test can reach its runtime to kill a container's process from outside
 * and to lose the exit notice on the way, as an ECS event can be lost.
 */
vi.hoisted(() => Object.assign(process.env, { RECONCILE_INTERVAL_MS: '200' }));

const stack = useSignedInStack();

const { api } = stack;

describe('local reconciliation', () => {
  it('turns a container with restart_policy never whose process was killed from outside, and whose exit nobody applied, into failed and releases its vCPU', async () => {
    const created = await api('POST', '/api/v1/containers', {
      hostname: `reconcile-${process.pid}`,
      cpu_cores: 1,
      restart_policy: 'never',
    });
    expect(created.status).toBe(200);
    const id: string = created.body.data.id;
    const running = await pollUntil(
      () => api('GET', `/api/v1/containers/${id}`),
      (response) => response.body.data?.state === 'running',
      20_000,
    );
    expect(running.body.data.state).toBe('running');
    expect((await api('GET', '/api/v1/users/me')).body.data.quota).toMatchObject({ containers: 1, running_cpu: 1 });

    const { runtime } = localContainers();
    const { taskArn } = (await containerStore.get(id))!;
    // This file runs on the process runtime (CONTAINER_RUNTIME=local, set by setup-env).
    const { pid } = (runtime as LocalRuntime).processOf(taskArn!)!;
    // The exit notice is lost on its way to the container service, as an EventBridge delivery can be.
    runtime.onTaskStatus(async () => undefined);
    try {
      process.kill(-pid, 'SIGKILL');
      await pollUntil(
        async () => isRunning(pid),
        (alive) => !alive,
      );
      // Nobody calls the API: the record is read straight from the table.
      const settled = await pollUntil(
        () => containerStore.get(id),
        (container) => container?.state !== 'running',
        10_000,
      );
      expect(settled).toMatchObject({ state: 'failed', taskArn });
    } finally {
      const service = containerServiceWith({ runtime });
      runtime.onTaskStatus((status) => service.applyTaskStatus(status));
    }
    expect((await api('GET', `/api/v1/containers/${id}`)).body.data.state).toBe('failed');
    expect((await api('GET', '/api/v1/users/me')).body.data.quota).toMatchObject({ containers: 1, running_cpu: 0 });
    // And it starts again like any failed container.
    const restarted = await api('POST', `/api/v1/containers/${id}/start`);
    expect(restarted.status).toBe(200);
    expect(restarted.body.data.state).toBe('running');
  });

  it('restarts a container whose process was killed from outside, and whose exit nobody applied, as its restart policy says', async () => {
    const created = await api('POST', '/api/v1/containers', { hostname: `reconcile-again-${process.pid}`, cpu_cores: 1 });
    expect(created.status).toBe(200);
    const id: string = created.body.data.id;
    await pollUntil(
      () => api('GET', `/api/v1/containers/${id}`),
      (response) => response.body.data?.state === 'running',
      20_000,
    );
    const { runtime } = localContainers();
    const { taskArn } = (await containerStore.get(id))!;
    const { pid } = (runtime as LocalRuntime).processOf(taskArn!)!;
    // The exit notice is lost, and only the kill's: the restart's own notices arrive as usual.
    const service = containerServiceWith({ runtime });
    runtime.onTaskStatus(async (status) => {
      if (status.taskArn === taskArn) return;
      await service.applyTaskStatus(status);
    });
    try {
      process.kill(-pid, 'SIGKILL');
      // As the exit's own notice would have: on-failure (the default) runs it again, counting one restart.
      const restarted = await pollUntil(
        () => api('GET', `/api/v1/containers/${id}`),
        (response) => response.body.data?.state === 'running' && response.body.data?.restart_count === 1,
        20_000,
      );
      expect(restarted.body.data).toMatchObject({ state: 'running', restart_count: 1 });
      expect((await containerStore.get(id))?.taskArn).not.toBe(taskArn);
    } finally {
      runtime.onTaskStatus((status) => service.applyTaskStatus(status));
    }
    expect((await api('DELETE', `/api/v1/containers/${id}`)).status).toBe(200);
  });

  it('turns a new container running when its RUNNING notice reached nobody (it came before the task was attached)', async () => {
    const { runtime } = localContainers();
    // Every notice is lost on its way to the container service, as one that finds no attached task is ignored.
    runtime.onTaskStatus(async () => undefined);
    try {
      const created = await api('POST', '/api/v1/containers', { hostname: `reconcile-lost-${process.pid}`, cpu_cores: 1 });
      expect(created.status).toBe(200);
      const id: string = created.body.data.id;
      const { taskArn } = (await containerStore.get(id))!;
      await pollUntil(
        () => runtime.describeTask(taskArn!),
        (status) => status?.lastStatus === 'RUNNING',
        20_000,
      );
      // Nobody calls the API: the record is read straight from the table.
      const settled = await pollUntil(
        () => containerStore.get(id),
        (container) => container?.state !== 'provisioning',
        10_000,
      );
      expect(settled).toMatchObject({ state: 'running', taskArn });
      expect((await api('DELETE', `/api/v1/containers/${id}`)).status).toBe(200);
    } finally {
      const service = containerServiceWith({ runtime });
      runtime.onTaskStatus((status) => service.applyTaskStatus(status));
    }
  });
});
