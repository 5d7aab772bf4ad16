import { beforeAll, describe, expect, it, vi } from 'vitest';
import { call, personalAccessToken, signedInUser, type SignedInUser } from '../support/api-client.js';
import { useStack } from '../support/local-stack.js';
import { pollUntil } from '../support/poll.js';

// Before the stack loads lib/config: this file's users may have 2 containers, 1 vCPU and 3072 MB running.
vi.hoisted(() => Object.assign(process.env, { QUOTA_MAX_CONTAINERS: '2', QUOTA_MAX_RUNNING_CPU: '1', QUOTA_MAX_MEMORY_MB: '3072' }));

const stack = useStack();
let user: SignedInUser;
let userToken: string;
let adminToken: string;

beforeAll(async () => {
  const admin = await signedInUser(stack.baseUrl, 'admin');
  user = await signedInUser(stack.baseUrl);
  [userToken, adminToken] = await Promise.all([personalAccessToken(stack.baseUrl, user), personalAccessToken(stack.baseUrl, admin)]);
});

let hostnameCounter = 0;
const api = (method: string, path: string, token: string, body?: unknown) => call(stack.baseUrl, method, path, { token, body });
const create = (token = userToken, workload: Record<string, unknown> = { cpu_cores: 1, memory_mb: 2048 }) =>
  api('POST', '/api/v1/containers', token, { hostname: `quota-${process.pid}-${(hostnameCounter += 1)}`, ...workload });
const quotaOf = async (token = userToken) => (await api('GET', '/api/v1/users/me', token)).body.data.quota;
/** The quota users/me shows a user of this file: its limits, and what the user has and runs. */
const limited = (containers: number, runningCpu: number, runningMemoryMb: number) => ({
  max_containers: 2,
  containers,
  max_running_cpu: 1,
  running_cpu: runningCpu,
  max_running_memory_mb: 3072,
  running_memory_mb: runningMemoryMb,
});
/** The token of a new user of its own, whose quota nothing else in this file uses. */
const freshUserToken = async () => personalAccessToken(stack.baseUrl, await signedInUser(stack.baseUrl));

describe('quotas over HTTP', () => {
  it('answers a clear 403 QUOTA_EXCEEDED past either limit, writes nothing, and shows the quota on users/me', async () => {
    expect(await quotaOf()).toEqual(limited(0, 0, 0));

    const first = await create();
    expect(first.status).toBe(200);
    expect(await quotaOf()).toEqual(limited(1, 1, 2048));

    const overCpu = await create();
    expect(overCpu.status).toBe(403);
    expect(overCpu.body).toEqual({
      error: {
        code: 'QUOTA_EXCEEDED',
        message: 'Quota exceeded: at most 1 vCPU running; you use 1 vCPU and this needs 1 vCPU more. Stop a container first.',
      },
    });
    expect((await api('GET', '/api/v1/containers', userToken)).body.data).toHaveLength(1);

    expect((await api('POST', `/api/v1/containers/${first.body.data.id}/stop`, userToken)).status).toBe(200);
    expect(await quotaOf()).toEqual(limited(1, 0, 0));
    const second = await create();
    expect(second.status).toBe(200);

    const overCount = await create();
    expect(overCount.status).toBe(403);
    expect(overCount.body.error).toEqual({
      code: 'QUOTA_EXCEEDED',
      message: 'Quota exceeded: at most 2 containers; you have 2. Delete one first.',
    });

    const start = await api('POST', `/api/v1/containers/${first.body.data.id}/start`, userToken);
    expect(start.status).toBe(403);
    expect(start.body.error.code).toBe('QUOTA_EXCEEDED');
    expect((await api('GET', `/api/v1/containers/${first.body.data.id}`, userToken)).body.data.state).toBe('stopped');
    expect(await quotaOf()).toEqual(limited(2, 1, 2048));

    // An admin is not limited, and sees no limits.
    expect((await api('POST', `/api/v1/containers/${first.body.data.id}/start`, adminToken)).status).toBe(200);
    expect(await quotaOf()).toEqual(limited(2, 2, 4096));
    expect(await quotaOf(adminToken)).toEqual({
      ...limited(0, 0, 0),
      max_containers: null,
      max_running_cpu: null,
      max_running_memory_mb: null,
    });

    for (const id of [first.body.data.id, second.body.data.id])
      expect((await api('DELETE', `/api/v1/containers/${id}`, userToken)).status).toBe(200);
    expect(await quotaOf()).toEqual(limited(0, 0, 0));
  });

  it('gives back the vCPU of a container whose process exits on its own (failed)', async () => {
    const token = await freshUserToken();
    const created = await create(token, {
      command: [process.execPath, '-e', 'process.exit(3)'],
      // Not restarted by the default on-failure policy: it stays failed.
      restart_policy: 'never',
    });
    expect(created.status).toBe(200);
    const failed = await pollUntil(
      () => api('GET', `/api/v1/containers/${created.body.data.id}`, token),
      (response) => response.body.data?.state === 'failed',
    );
    expect(failed.body.data.state).toBe('failed');
    expect(await quotaOf(token)).toEqual(limited(1, 0, 0));
  });

  it('answers 403 QUOTA_EXCEEDED naming the memory when a container would pass the memory running, and writes nothing', async () => {
    // Prepare: 3072 MB may run; one vCPU is free, so only the memory stands in the way.
    const token = await freshUserToken();
    // Act
    const tooBig = await create(token, { cpu_cores: 1, memory_mb: 4096 });
    // Assess
    expect(tooBig.status).toBe(403);
    expect(tooBig.body).toEqual({
      error: {
        code: 'QUOTA_EXCEEDED',
        message: 'Quota exceeded: at most 3072 MB of memory running; you use 0 MB and this needs 4096 MB more. Stop a container first.',
      },
    });
    expect((await api('GET', '/api/v1/containers', token)).body.data).toEqual([]);
    expect(await quotaOf(token)).toEqual(limited(0, 0, 0));
  });
});
