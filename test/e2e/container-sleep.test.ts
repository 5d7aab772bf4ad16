import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, personalAccessToken, signedInUser } from '../support/api-client.js';
import { startTestStack, type TestStack } from '../support/local-stack.js';

/*
 * Sleep and wake on the process runtime (issue 26): the idle timeout as the API takes and
 * answers it. The engine journeys are in test/engine/sleep-and-wake.test.ts.
 */
let stack: TestStack;
let token: string;

beforeAll(async () => {
  stack = await startTestStack();
  token = await personalAccessToken(stack.baseUrl, await signedInUser(stack.baseUrl));
});

afterAll(async () => {
  await stack?.close();
});

let counter = 0;
const uniqueHostname = () => `sleep-${process.pid}-${(counter += 1)}`;
const api = (method: string, path: string, body?: unknown) => call(stack.baseUrl, method, path, { token, body });
/** A command that never listens: the container stays provisioning, which these tests do not wait for. */
const idle = [process.execPath, '-e', 'setInterval(() => {}, 1000)'];

describe('idle_timeout_s over HTTP', () => {
  it('is null unless given, is set at create and by PATCH, and PATCH null sets it back to never', async () => {
    const plain = await api('POST', '/api/v1/containers', { hostname: uniqueHostname(), command: idle });
    expect(plain.status).toBe(200);
    expect(plain.body.data).toMatchObject({ idle_timeout_s: null, last_wake_ms: null });

    const created = await api('POST', '/api/v1/containers', { hostname: uniqueHostname(), command: idle, idle_timeout_s: 30 });
    expect(created.status).toBe(200);
    expect(created.body.data.idle_timeout_s).toBe(30);
    const id = created.body.data.id;
    expect((await api('GET', `/api/v1/containers/${id}`)).body.data.idle_timeout_s).toBe(30);

    const patched = await api('PATCH', `/api/v1/containers/${id}`, { idle_timeout_s: 86_400 });
    expect(patched.status).toBe(200);
    expect(patched.body.data.idle_timeout_s).toBe(86_400);
    const cleared = await api('PATCH', `/api/v1/containers/${id}`, { idle_timeout_s: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.data.idle_timeout_s).toBeNull();
    expect((await api('GET', `/api/v1/containers/${id}`)).body.data.idle_timeout_s).toBeNull();

    await Promise.all([api('DELETE', `/api/v1/containers/${id}`), api('DELETE', `/api/v1/containers/${plain.body.data.id}`)]);
  });

  it.each([
    [29, 'must be from 30 to 86400'],
    [86_401, 'must be from 30 to 86400'],
    [30.5, 'must be a whole number of seconds'],
    ['60', 'must be a whole number of seconds'],
  ])('answers 400 BAD_REQUEST naming idle_timeout_s for %j, at create and at PATCH', async (value, message) => {
    const created = await api('POST', '/api/v1/containers', { hostname: uniqueHostname(), command: idle, idle_timeout_s: value });
    expect(created.status).toBe(400);
    expect(created.body).toEqual({
      error: {
        code: 'BAD_REQUEST',
        message: expect.stringContaining(`idle_timeout_s: ${message}`),
        details: [{ field: 'idle_timeout_s', message }],
      },
    });
    const other = await api('POST', '/api/v1/containers', { hostname: uniqueHostname(), command: idle });
    const patched = await api('PATCH', `/api/v1/containers/${other.body.data.id}`, { idle_timeout_s: value });
    expect(patched.status).toBe(400);
    expect(patched.body.error.details).toEqual([{ field: 'idle_timeout_s', message }]);
    await api('DELETE', `/api/v1/containers/${other.body.data.id}`);
  });
});
