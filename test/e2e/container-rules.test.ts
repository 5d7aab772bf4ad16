import { describe, expect, it } from 'vitest';
import { useSignedInStack } from '../support/local-stack.js';

const stack = useSignedInStack();

let counter = 0;
const uniqueHostname = () => `rules-${process.pid}-${(counter += 1)}`;
const { api } = stack;
/** A command that never listens: the container stays provisioning, which these tests do not wait for. */
const idle = [process.execPath, '-e', 'setInterval(() => {}, 1000)'];

/** An env named `name` is refused 400 BAD_REQUEST as reserved, at create and at PATCH. */
async function expectEnvNameRefused(name: string) {
  // JSON.parse keeps "__proto__" as an own key, as a body on the wire does.
  const created = await api('POST', '/api/v1/containers', JSON.parse(`{"hostname":"${uniqueHostname()}","env":{"${name}":"x"}}`));
  expect(created.status).toBe(400);
  expect(created.body).toEqual({
    error: {
      code: 'BAD_REQUEST',
      message: expect.stringContaining(`env.${name}: is reserved`),
      details: [{ field: `env.${name}`, message: expect.stringMatching(/^is reserved/) }],
    },
  });
  const other = await api('POST', '/api/v1/containers', { hostname: uniqueHostname(), command: idle });
  const patched = await api('PATCH', `/api/v1/containers/${other.body.data.id}`, JSON.parse(`{"env":{"${name}":"x"}}`));
  expect(patched.status).toBe(400);
  expect(patched.body.error.message).toContain(`env.${name}: is reserved`);
  await api('DELETE', `/api/v1/containers/${other.body.data.id}`);
}

describe('env names over HTTP', () => {
  it.each(['PORT', 'CONTAINER_ID', 'CONTAINER_HOSTNAME', 'AWS_REGION', 'ECS_CONTAINER_METADATA_URI'])(
    'answers 400 BAD_REQUEST naming the reserved name %s, at create and at PATCH',
    async (name) => {
      await expectEnvNameRefused(name);
    },
  );

  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'isPrototypeOf'])(
    'answers 400 BAD_REQUEST, never 500, for the object property name %s, at create and at PATCH',
    async (name) => {
      await expectEnvNameRefused(name);
    },
  );
});

describe('hostnames over HTTP', () => {
  it.each(['api', 'www', 'admin', 'console', 'login', 'auth', 'status', 'static', 'assets', 'docs', 'mail', 'localhost'])(
    'answers 400 BAD_REQUEST for the reserved hostname %s',
    async (hostname) => {
      const created = await api('POST', '/api/v1/containers', { hostname });
      expect(created.status).toBe(400);
      expect(created.body).toEqual({
        error: {
          code: 'BAD_REQUEST',
          message: expect.stringContaining('hostname: is reserved'),
          details: [{ field: 'hostname', message: 'is reserved by the platform; choose another' }],
        },
      });
    },
  );
});

describe('health_check, restart_policy, restart_count and state_reason over HTTP', () => {
  it('answers them on every record, takes them at create and PATCH, and refuses bad ones with 400', async () => {
    const created = await api('POST', '/api/v1/containers', {
      hostname: uniqueHostname(),
      command: idle,
      health_check: { path: '/healthz', grace_s: 5 },
      restart_policy: 'always',
    });
    expect(created.status).toBe(200);
    expect(created.body.data).toMatchObject({
      health_check: { path: '/healthz', interval_s: 10, timeout_s: 2, grace_s: 5 },
      restart_policy: 'always',
      restart_count: 0,
      state_reason: null,
    });
    const id = created.body.data.id;

    const patched = await api('PATCH', `/api/v1/containers/${id}`, { health_check: null, restart_policy: 'never' });
    const refused = await api('PATCH', `/api/v1/containers/${id}`, { health_check: { path: 'healthz' }, restart_policy: 'sometimes' });
    const stopped = await api('POST', `/api/v1/containers/${id}/stop`);
    const read = await api('GET', `/api/v1/containers/${id}`);

    expect(patched.body.data).toMatchObject({ health_check: null, restart_policy: 'never' });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('health_check.path: must start with /');
    expect(refused.body.error.message).toContain('restart_policy: must be one of never, on-failure or always');
    expect(stopped.body.data).toMatchObject({ state: 'stopped', state_reason: 'stopped on request' });
    expect(read.body.data).toMatchObject({
      health_check: null,
      restart_policy: 'never',
      state: 'stopped',
      state_reason: 'stopped on request',
    });
    await api('DELETE', `/api/v1/containers/${id}`);
  });
});
