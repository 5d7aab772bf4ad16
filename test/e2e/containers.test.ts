import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  detailFields,
  errorEnvelope,
  personalAccessToken,
  signedInUser,
  type ApiResponse,
  type SignedInUser,
} from '../support/api-client.js';
import { useStack } from '../support/local-stack.js';
import { issuedTokens, registerApp } from '../support/oauth-flow.js';
import { pollUntil } from '../support/poll.js';

const stack = useStack();
let user: SignedInUser;
let userToken: string;
let other: SignedInUser;
let otherToken: string;
let admin: SignedInUser;
let adminToken: string;
/** The workload a create without one gets, as the declaration says (lib/containers/workload.ts). */
let defaultWorkload: Record<string, unknown>;

beforeAll(async () => {
  // Loaded after the stack, whose settings the configuration reads when it loads.
  const { workloadFromJson, workloadToJson } = await import('../../lib/containers/workload.js');
  defaultWorkload = workloadToJson(workloadFromJson({}));
  [user, other, admin] = await Promise.all([
    signedInUser(stack.baseUrl),
    signedInUser(stack.baseUrl),
    signedInUser(stack.baseUrl, 'admin'),
  ]);
  [userToken, otherToken, adminToken] = await Promise.all([
    personalAccessToken(stack.baseUrl, user),
    personalAccessToken(stack.baseUrl, other),
    personalAccessToken(stack.baseUrl, admin),
  ]);
});

let hostnameCounter = 0;
const uniqueHostname = () => `e2e-${process.pid}-${(hostnameCounter += 1)}`;

const api = (method: string, path: string, token: string, body?: unknown) => call(stack.baseUrl, method, path, { token, body });

async function createContainer(token = userToken, body: Record<string, unknown> = {}): Promise<ApiResponse> {
  const response = await api('POST', '/api/v1/containers', token, { hostname: uniqueHostname(), ...body });
  expect(response.status).toBe(200);
  return response;
}

/** Polls GET until the container is in `state`; answers the last record. */
async function waitForState(id: string, state: string, token = userToken): Promise<Record<string, unknown>> {
  const last = await pollUntil(
    () => api('GET', `/api/v1/containers/${id}`, token),
    (response) => response.body.data?.state === state,
  );
  return last.body.data;
}

async function runningContainer(token = userToken): Promise<string> {
  const { body } = await createContainer(token);
  expect((await waitForState(body.data.id, 'running', token)).state).toBe('running');
  return body.data.id;
}

const containerRecord = (fields: Record<string, unknown>) => ({
  id: expect.stringMatching(/^[0-9a-f-]{36}$/),
  user_id: user.userId,
  hostname: expect.any(String),
  state: expect.any(String),
  ...defaultWorkload,
  restart_count: 0,
  last_wake_ms: null,
  release: expect.any(Number),
  last_swap_ms: null,
  registry_credentials_set: false,
  state_reason: null,
  url: expect.stringMatching(/^http:\/\/[a-z0-9-]+\.localhost:\d+\/$/),
  created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
  updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
  ...fields,
});

const someId = '0190a3e4-5b6c-7d8e-9f01-23456789abcd';
const endpoints: Array<[string, string]> = [
  ['GET', '/api/v1/containers'],
  ['POST', '/api/v1/containers'],
  ['GET', `/api/v1/containers/${someId}`],
  ['DELETE', `/api/v1/containers/${someId}`],
  ['POST', `/api/v1/containers/${someId}/start`],
  ['POST', `/api/v1/containers/${someId}/stop`],
  ['POST', `/api/v1/containers/${someId}/restart`],
  ['GET', `/api/v1/containers/${someId}/metrics`],
  ['GET', `/api/v1/containers/${someId}/logs`],
  ['PATCH', `/api/v1/containers/${someId}`],
];
const unsafeEndpoints = endpoints.filter(([method]) => method !== 'GET');
// PATCH checks its body (400) before the container (404); test/e2e/container-workloads.test.ts covers its 404.
const idEndpoints = endpoints.filter(([method, path]) => path.includes(someId) && method !== 'PATCH');

describe('container endpoints: credentials', () => {
  it.each(endpoints)('%s %s answers 401 without a credential', async (method, path) => {
    const response = await call(stack.baseUrl, method, path, { body: method === 'POST' ? { hostname: 'x' } : undefined });

    expect(response.status).toBe(401);
    expect(response.body).toEqual(errorEnvelope('UNAUTHORIZED'));
  });

  it.each(endpoints)('%s %s answers 401 for an invalid token', async (method, path) => {
    const response = await api(method, path, `svpat_${randomUUID()}`, method === 'POST' ? { hostname: 'x' } : undefined);

    expect(response.status).toBe(401);
    expect(response.body).toEqual(errorEnvelope('UNAUTHORIZED'));
  });

  it.each(unsafeEndpoints)('%s %s answers 403 CSRF_REJECTED to a session without x-csrf-token', async (method, path) => {
    const response = await call(stack.baseUrl, method, path, {
      token: user.sessionToken,
      body: method === 'POST' ? { hostname: uniqueHostname() } : undefined,
    });

    expect(response.status).toBe(403);
    expect(response.body).toEqual(errorEnvelope('CSRF_REJECTED'));
  });

  it('accepts a session with its x-csrf-token', async () => {
    const response = await call(stack.baseUrl, 'POST', '/api/v1/containers', {
      token: user.sessionToken,
      headers: { 'x-csrf-token': user.csrfToken },
      body: { hostname: uniqueHostname() },
    });

    expect(response.status).toBe(200);
  });
});

describe('POST /api/v1/containers', () => {
  it('creates a container with the defaults, answering it as provisioning', async () => {
    const hostname = uniqueHostname();

    const response = await api('POST', '/api/v1/containers', userToken, { hostname });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: containerRecord({ hostname, state: 'provisioning', url: `http://${hostname}.localhost:${new URL(stack.baseUrl).port}/` }),
    });
  });

  it('creates a container with every field given', async () => {
    const response = await api('POST', '/api/v1/containers', userToken, {
      hostname: uniqueHostname(),
      cpu_cores: 2,
      memory_mb: 16384,
      disk_gb: 32,
    });

    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ cpu_cores: 2, memory_mb: 16384, disk_gb: 32, state: 'provisioning' });
  });

  it.each([
    ['an unknown field', { hostname: 'ok-name', entrypoint: ['sh'] }],
    ['disk_gb 33', { hostname: 'ok-name', disk_gb: 33 }],
    ['disk_gb 17', { hostname: 'ok-name', disk_gb: 17 }],
    ['disk_gb 18.5', { hostname: 'ok-name', disk_gb: 18.5 }],
    ['disk_gb as a string', { hostname: 'ok-name', disk_gb: '20' }],
    ['no hostname', {}],
    ['an upper-case hostname', { hostname: 'Web' }],
    ['a 64-character hostname', { hostname: 'a'.repeat(64) }],
    ['cpu_cores 3', { hostname: 'ok-name', cpu_cores: 3 }],
    ['memory_mb 511', { hostname: 'ok-name', memory_mb: 511 }],
    ['memory_mb 1024.5', { hostname: 'ok-name', memory_mb: 1024.5 }],
  ])('answers 400 BAD_REQUEST for %s', async (_what, body) => {
    const response = await api('POST', '/api/v1/containers', userToken, body);

    expect(response.status).toBe(400);
    expect(response.body).toEqual(errorEnvelope('BAD_REQUEST'));
  });

  it('answers 400 naming the maximum when memory is over what the CPU allows', async () => {
    const response = await api('POST', '/api/v1/containers', userToken, { hostname: 'ok-name', cpu_cores: 4, memory_mb: 30721 });

    expect(response.status).toBe(400);
    expect(response.body.error.message).toContain('30720');
  });

  it('answers a bad memory_mb with 400 details naming memory_mb beside code and message', async () => {
    const response = await fetch(`${stack.baseUrl}/api/v1/containers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${userToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ hostname: uniqueHostname(), memory_mb: 3 }),
    });
    const body = await response.json();

    expect(response.status).toBe(400);
    expect(body).toEqual({
      error: {
        code: 'BAD_REQUEST',
        message: expect.stringContaining('memory_mb'),
        details: [{ field: 'memory_mb', message: expect.any(String) }],
      },
    });
  });

  it('names the fields a domain rule refuses in details: memory over what the CPU allows, a taken hostname', async () => {
    const tooMuch = await api('POST', '/api/v1/containers', userToken, { hostname: 'ok-name', cpu_cores: 4, memory_mb: 30721 });
    const { body: created } = await createContainer();
    const taken = await api('POST', '/api/v1/containers', otherToken, { hostname: created.data.hostname });

    expect(tooMuch.body.error.details).toEqual([{ field: 'memory_mb', message: 'must be at most 30720 for 4 CPU cores' }]);
    expect([taken.status, detailFields(taken.body)]).toEqual([409, ['hostname']]);
  });

  it('answers 400 for a body that is not JSON, and for a JSON array', async () => {
    const notJson = await call(stack.baseUrl, 'POST', '/api/v1/containers', {
      token: userToken,
      rawBody: '{"hostname":',
      headers: { 'content-type': 'application/json' },
    });
    const array = await api('POST', '/api/v1/containers', userToken, [{ hostname: 'x' }]);

    expect([notJson.status, array.status]).toEqual([400, 400]);
    expect(notJson.body).toEqual(errorEnvelope('BAD_REQUEST'));
  });

  it('answers 409 CONFLICT for a hostname that is taken, even by another user', async () => {
    const hostname = uniqueHostname();
    await api('POST', '/api/v1/containers', userToken, { hostname });

    const response = await api('POST', '/api/v1/containers', otherToken, { hostname });

    expect(response.status).toBe(409);
    expect(response.body).toEqual(errorEnvelope('CONFLICT'));
  });

  it('lets exactly one of 20 concurrent creates of one hostname succeed', async () => {
    const hostname = uniqueHostname();

    const responses = await Promise.all(Array.from({ length: 20 }, () => api('POST', '/api/v1/containers', userToken, { hostname })));

    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([200, ...Array<number>(19).fill(409)]);
    const listed = await api('GET', '/api/v1/containers?limit=1000', userToken);
    expect(listed.body.data.filter((container: { hostname: string }) => container.hostname === hostname)).toHaveLength(1);
  });
});

describe('a container’s life', () => {
  it('goes from provisioning to running on its own, within 3 s', async () => {
    const startedAt = Date.now();
    const { body } = await createContainer();

    const record = await waitForState(body.data.id, 'running');

    expect(record).toEqual(containerRecord({ id: body.data.id, state: 'running' }));
    expect(Date.now() - startedAt).toBeLessThan(3000);
  });

  it('stops, starts, restarts and deletes', async () => {
    const id = await runningContainer();

    const stopped = await api('POST', `/api/v1/containers/${id}/stop`, userToken);
    const stoppedAgain = await api('POST', `/api/v1/containers/${id}/stop`, userToken);
    const started = await api('POST', `/api/v1/containers/${id}/start`, userToken);
    const startedAgain = await api('POST', `/api/v1/containers/${id}/start`, userToken);
    const restarted = await api('POST', `/api/v1/containers/${id}/restart`, userToken);
    const deleted = await api('DELETE', `/api/v1/containers/${id}`, userToken);
    const afterDelete = await api('GET', `/api/v1/containers/${id}`, userToken);

    expect([stopped, stoppedAgain].map((response) => [response.status, response.body.data.state])).toEqual([
      [200, 'stopped'],
      [200, 'stopped'],
    ]);
    expect([started, startedAgain, restarted].map((response) => [response.status, response.body.data.state])).toEqual([
      [200, 'running'],
      [200, 'running'],
      [200, 'running'],
    ]);
    expect(restarted.body).toEqual({ data: containerRecord({ id, state: 'running' }) });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ data: 'deleted' });
    expect(afterDelete.status).toBe(404);
  });

  it('restarts a stopped container', async () => {
    const id = await runningContainer();
    await api('POST', `/api/v1/containers/${id}/stop`, userToken);

    const restarted = await api('POST', `/api/v1/containers/${id}/restart`, userToken);

    expect([restarted.status, restarted.body.data.state]).toEqual([200, 'running']);
  });

  it('frees the hostname when deleted', async () => {
    const hostname = uniqueHostname();
    const { body } = await createContainer(userToken, { hostname });

    await api('DELETE', `/api/v1/containers/${body.data.id}`, userToken);
    const again = await api('POST', '/api/v1/containers', otherToken, { hostname });

    expect(again.status).toBe(200);
  });

  it('answers every concurrent start and stop with 200 or 409, ending in the state of the last success', async () => {
    const id = await runningContainer();
    await api('POST', `/api/v1/containers/${id}/stop`, userToken);
    const completed: Array<{ status: number; state?: string }> = [];

    await Promise.all(
      ['start', 'stop', 'start', 'stop'].map(async (action) => {
        const response = await api('POST', `/api/v1/containers/${id}/${action}`, userToken);
        completed.push({ status: response.status, state: response.body.data?.state });
      }),
    );

    expect(completed.every(({ status }) => status === 200 || status === 409)).toBe(true);
    const successes = completed.filter(({ status }) => status === 200);
    expect(successes.length).toBeGreaterThan(0);
    const final = await api('GET', `/api/v1/containers/${id}`, userToken);
    expect(final.body.data.state).toBe(successes.at(-1)!.state);
  });
});

describe('GET /api/v1/containers/{id}/metrics', () => {
  it('reports real use of a running container and zeros once it is stopped', async () => {
    const id = await runningContainer();

    const running = await api('GET', `/api/v1/containers/${id}/metrics`, userToken);
    await api('POST', `/api/v1/containers/${id}/stop`, userToken);
    const stopped = await api('GET', `/api/v1/containers/${id}/metrics`, userToken);

    expect(running.status).toBe(200);
    expect(running.body.data).toEqual({
      cpu_percent: expect.any(Number),
      memory_used_mb: expect.any(Number),
      memory_total_mb: 512,
      disk_used_gb: expect.any(Number),
      disk_total_gb: 20,
      sampled_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(Date.now() - Date.parse(running.body.data.sampled_at)).toBeLessThan(60_000);
    expect(running.body.data.memory_used_mb).toBeGreaterThan(0);
    // A few kilobytes of files: 0 GB to three decimals, never 7.45e-8.
    expect(running.body.data.disk_used_gb).toBe(Number(running.body.data.disk_used_gb.toFixed(3)));
    expect(running.body.data.cpu_percent).toBeGreaterThanOrEqual(0);
    expect(running.body.data.cpu_percent).toBeLessThanOrEqual(100);
    expect(stopped.body).toEqual({
      data: { cpu_percent: 0, memory_used_mb: 0, memory_total_mb: 512, disk_used_gb: 0, disk_total_gb: 20, sampled_at: null },
    });
  });
});

describe('visibility', () => {
  let mine: string;
  let theirs: string;
  beforeAll(async () => {
    mine = (await createContainer(userToken)).body.data.id;
    theirs = (await createContainer(otherToken)).body.data.id;
  });

  it("lists the caller's own containers only", async () => {
    const response = await api('GET', '/api/v1/containers?limit=1000', userToken);

    const ids = response.body.data.map((container: { id: string }) => container.id);
    expect(ids).toContain(mine);
    expect(ids).not.toContain(theirs);
    expect(response.body.data.every((container: { user_id: string }) => container.user_id === user.userId)).toBe(true);
  });

  it("lists every user's containers for an admin, and lets the admin act on them", async () => {
    const listed = await api('GET', '/api/v1/containers?limit=1000', adminToken);
    const fetched = await api('GET', `/api/v1/containers/${theirs}`, adminToken);
    const stopped = await api('POST', `/api/v1/containers/${theirs}/stop`, adminToken);

    const ids = listed.body.data.map((container: { id: string }) => container.id);
    expect(ids).toEqual(expect.arrayContaining([mine, theirs]));
    expect(fetched.body.data).toMatchObject({ id: theirs, user_id: other.userId });
    expect([stopped.status, stopped.body.data.state]).toEqual([200, 'stopped']);
  });

  it("gives an admin's OAuth access token only the admin's own containers (issue 7 item 4)", async () => {
    const adminsOwn = (await createContainer(adminToken)).body.data.id;
    const app = await registerApp(stack.baseUrl, admin, { name: 'Third party', redirect_uris: ['http://127.0.0.1:9/callback'] });
    const { access_token: oauthToken } = await issuedTokens(stack.baseUrl, admin, app);

    const listed = await api('GET', '/api/v1/containers?limit=1000', oauthToken);
    const ids = listed.body.data.map((container: { id: string }) => container.id);
    expect(ids).toContain(adminsOwn);
    expect(ids).not.toContain(theirs);
    expect(await api('GET', `/api/v1/containers/${theirs}`, oauthToken)).toMatchObject({ status: 404, body: errorEnvelope('NOT_FOUND') });
    expect((await api('DELETE', `/api/v1/containers/${theirs}`, oauthToken)).status).toBe(404);
    expect((await api('GET', `/api/v1/containers/${theirs}`, adminToken)).status).toBe(200);
  });

  it.each(idEndpoints)("%s %s answers 404 for another user's container", async (method, path) => {
    const response = await api(method, path.replace(someId, theirs), userToken);

    expect(response.status).toBe(404);
    expect(response.body).toEqual(errorEnvelope('NOT_FOUND'));
  });

  it.each(idEndpoints)('%s %s answers 404 for an unknown id', async (method, path) => {
    const response = await api(method, path, userToken);

    expect(response.status).toBe(404);
    expect(response.body).toEqual(errorEnvelope('NOT_FOUND'));
  });

  it.each(idEndpoints)('%s %s answers 404 for an id that is not a UUID', async (method, path) => {
    const response = await api(method, path.replace(someId, 'not-a-uuid'), userToken);

    expect(response.status).toBe(404);
    expect(response.body).toEqual(errorEnvelope('NOT_FOUND'));
  });
});

describe('GET /api/v1/containers', () => {
  it('pages newest first with a Link header to the next page', async () => {
    const listUser = await signedInUser(stack.baseUrl);
    const token = await personalAccessToken(stack.baseUrl, listUser);
    const created: string[] = [];
    for (let index = 0; index < 3; index += 1) created.push((await createContainer(token)).body.data.id);

    const first = await api('GET', '/api/v1/containers?limit=2', token);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1];
    const second = await call(next!.replace(/^https?:\/\/[^/]+/, stack.baseUrl), 'GET', '', { token });

    expect(first.body.data.map((container: { id: string }) => container.id)).toEqual([created[2], created[1]]);
    expect(second.body.data.map((container: { id: string }) => container.id)).toEqual([created[0]]);
  });

  it('answers 400 for a bad limit or cursor', async () => {
    const badLimit = await api('GET', '/api/v1/containers?limit=0', userToken);
    const badCursor = await api('GET', '/api/v1/containers?cursor=bm9wZQ', userToken);

    expect([badLimit.status, badCursor.status]).toEqual([400, 400]);
  });
});
