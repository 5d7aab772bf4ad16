import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { engineClient } from '../../lib/local/docker-engine.js';
import { appRequest } from '../support/app-request.js';
import { TEST_IMAGE } from '../support/global-engine.js';
import { useSignedInStack } from '../support/local-stack.js';
import { pollUntil } from '../support/poll.js';
import { type PrivateRegistry, pushTo, startPrivateRegistry } from '../support/private-registry.js';

/*
 * Private images (issue 33, item 5), for real: Debian's docker-registry on loopback with htpasswd
 * authentication holds the test image; the local stack pulls it through the engine's API with the
 * container's registry_credentials (X-Registry-Auth).
 */
const engine = engineClient(inject('dockerHost'));
const stack = useSignedInStack();
const { api } = stack;
let registry: PrivateRegistry;
let image: string;
let counter = 0;
const hostname = () => `pr-${process.pid}-${(counter += 1)}`;

beforeAll(async () => {
  registry = await startPrivateRegistry();
  image = await pushTo(engine, registry, TEST_IMAGE, `private-${process.pid}/web`);
}, 120_000);

afterAll(async () => {
  await registry?.close();
  // The pulled copy and its mark, so the engine keeps nothing of this run.
  const mark = `localhost/container-hosting-credentialed:${createHash('sha256').update(image).digest('hex').slice(0, 40)}`;
  for (const name of [image, mark])
    await engine
      .getImage(name)
      .remove({ noprune: true })
      .catch(() => undefined);
});

/** Creates the container and waits until it runs or has failed to (its policy never restarts it). */
async function createAndSettle(body: Record<string, unknown>) {
  const created = await api('POST', '/api/v1/containers', { hostname: hostname(), image, restart_policy: 'never', ...body });
  expect(created.status).toBe(200);
  const settled = await pollUntil(
    () => api('GET', `/api/v1/containers/${created.body.data.id}`),
    (response) => response.body.data.state !== 'provisioning',
    60_000,
  );
  return { created, record: settled.body.data };
}

describe('a private image on a registry with htpasswd authentication', () => {
  it('runs with the right credentials, which the record shows only as registry_credentials_set', async () => {
    const { created, record } = await createAndSettle({
      registry_credentials: { username: registry.username, password: registry.password },
    });

    expect(record).toMatchObject({ state: 'running', registry_credentials_set: true, image });
    expect(JSON.stringify(created.body)).not.toContain(registry.password);
    expect(JSON.stringify(record)).not.toContain(registry.password);
    expect((await appRequest(record.url)).text).toContain('served from the image');
  }, 90_000);

  it('fails with the registry answer when the password is wrong, even though the engine holds the image by now', async () => {
    const { record } = await createAndSettle({ registry_credentials: { username: registry.username, password: 'wrong-password' } });

    expect(record.state).toBe('failed');
    expect(record.state_reason).toMatch(new RegExp(`^image pull failed: ${image.replace(/[.]/g, '\\.')}: .*unauthorized`));
    expect(record.state_reason).not.toContain('wrong-password');
  }, 90_000);

  it('fails without credentials, naming what the registry said, and never runs the copy another container pulled', async () => {
    const { record } = await createAndSettle({});

    expect(record).toMatchObject({ state: 'failed', registry_credentials_set: false });
    expect(record.state_reason).toMatch(/^image pull failed: .*unauthorized/);
  }, 90_000);

  it('takes credentials by PATCH and forgets them with null; a start then pulls with what is kept', async () => {
    const { record } = await createAndSettle({});
    const patched = await api('PATCH', `/api/v1/containers/${record.id}`, {
      registry_credentials: { username: registry.username, password: registry.password },
    });
    const started = await api('POST', `/api/v1/containers/${record.id}/start`);
    await api('POST', `/api/v1/containers/${record.id}/stop`);
    const forgotten = await api('PATCH', `/api/v1/containers/${record.id}`, { registry_credentials: null });
    const startedWithout = await api('POST', `/api/v1/containers/${record.id}/start`);

    expect(patched.body.data.registry_credentials_set).toBe(true);
    expect(started.status).toBe(200);
    expect(started.body.data.state).toBe('running');
    expect(forgotten.body.data.registry_credentials_set).toBe(false);
    expect(startedWithout.body.error?.message ?? startedWithout.body.data?.state_reason).toMatch(/unauthorized/);
  }, 120_000);
});
