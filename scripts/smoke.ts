/**
 * `npm run smoke -- --base-url URL --token PAT`: the main journeys end to end against any
 * deployment (docs/operations.md, "Smoke test"): a container is created, started, measured, stopped and
 * deleted; an OAuth application is registered, its secret rotated, and deleted; and errors are
 * checked to come in the envelope. Everything it creates is deleted again, also when a step
 * fails. Exit code 0 when every step passed, 1 otherwise, 2 for bad arguments.
 *
 * The token is a personal access token of a user (not necessarily an admin); SMOKE_TOKEN may
 * carry it instead of --token, which keeps it out of shell history and process listings. It is
 * never printed. Only `fetch` is used, so the script needs nothing but Node and the URL.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';

const usage = 'usage: npm run smoke -- --base-url URL [--token PAT | SMOKE_TOKEN=PAT] [--timeout-seconds 180]';

interface Response {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: whatever JSON the deployment answers; each step checks the fields it reads.
  body: any;
}

class StepFailed extends Error {}

const check = (condition: unknown, message: string): void => {
  if (!condition) throw new StepFailed(message);
};

/** What a step saw, for a failure message: status and the error code, never a secret. */
const describe = (response: Response): string =>
  `HTTP ${response.status}${response.body?.error ? ` ${response.body.error.code}: ${response.body.error.message}` : ''}`;

export interface SmokeOptions {
  baseUrl: string;
  token: string;
  /** The most a container may take to run, all retries of start included. */
  timeoutMs: number;
  print: (line: string) => void;
}

/** Runs every journey; answers whether all passed. */
export async function runSmoke(options: SmokeOptions): Promise<boolean> {
  const base = options.baseUrl.replace(/\/+$/, '');
  const call = async (method: string, path: string, body?: unknown, token: string | null = options.token): Promise<Response> => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        accept: 'application/json',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = { unparsed: text.slice(0, 200) };
    }
    return { status: response.status, body: parsed };
  };

  let passed = 0;
  let failed = 0;
  const step = async (name: string, run: () => Promise<void>): Promise<boolean> => {
    const startedAt = Date.now();
    try {
      await run();
      passed += 1;
      options.print(`ok   ${name} (${Date.now() - startedAt} ms)`);
      return true;
    } catch (error) {
      failed += 1;
      options.print(`FAIL ${name}: ${error instanceof Error ? error.message : String(error)}`);
      return false;
    }
  };
  /** The envelope of every failure: exactly `{ error: { code, message } }`. */
  const expectEnvelope = (response: Response, status: number, code: string): void => {
    check(response.status === status, `expected ${status} ${code}, got ${describe(response)}`);
    const keys = Object.keys(response.body ?? {});
    check(keys.length === 1 && keys[0] === 'error', `expected only "error" in the body, got ${JSON.stringify(keys)}`);
    check(response.body.error.code === code, `expected code ${code}, got ${response.body.error.code}`);
    check(typeof response.body.error.message === 'string' && response.body.error.message.length > 0, 'expected an error message');
  };

  const suffix = randomBytes(4).toString('hex');
  let containerId: string | undefined;
  let appId: string | undefined;

  try {
    const signedIn = await step('the token authenticates (GET /api/v1/users/me)', async () => {
      const me = await call('GET', '/api/v1/users/me');
      check(me.status === 200, `expected 200, got ${describe(me)}`);
      check(typeof me.body?.data?.id === 'string', 'expected the user in data');
    });

    await step('errors come in the envelope (401 without a token, 404 for an unknown container, 400 for a bad body)', async () => {
      expectEnvelope(await call('GET', '/api/v1/containers', undefined, null), 401, 'UNAUTHORIZED');
      expectEnvelope(await call('GET', '/api/v1/containers/00000000-0000-7000-8000-000000000000'), 404, 'NOT_FOUND');
      expectEnvelope(await call('POST', '/api/v1/containers', { hostname: 'Not A Hostname!' }), 400, 'BAD_REQUEST');
    });
    if (!signedIn) return false;

    const created = await step('create a container', async () => {
      const response = await call('POST', '/api/v1/containers', { hostname: `smoke-${suffix}` });
      check(response.status === 200, `expected 200, got ${describe(response)}`);
      containerId = response.body.data.id;
      check(typeof containerId === 'string', 'expected the container id');
      check(response.body.data.hostname === `smoke-${suffix}`, 'expected the hostname asked for');
    });

    if (created) {
      await step('start it and wait until it runs', async () => {
        const deadline = Date.now() + options.timeoutMs;
        for (;;) {
          // Start answers once the task runs; 504 means still starting, and a repeated start waits for the same task.
          const response = await call('POST', `/api/v1/containers/${containerId}/start`);
          if (response.status === 200 && response.body.data.state === 'running') return;
          check(response.status === 200 || response.status === 504, `expected 200 or 504, got ${describe(response)}`);
          check(Date.now() < deadline, `still ${response.body.data?.state ?? 'starting'} after ${options.timeoutMs} ms`);
          await sleep(2000);
        }
      });

      await step('read its metrics', async () => {
        const response = await call('GET', `/api/v1/containers/${containerId}/metrics`);
        check(response.status === 200, `expected 200, got ${describe(response)}`);
        const metrics = response.body.data;
        for (const field of ['cpu_percent', 'memory_used_mb', 'memory_total_mb', 'disk_used_gb', 'disk_total_gb']) {
          check(typeof metrics?.[field] === 'number', `expected a number in ${field}`);
        }
      });

      await step('stop it', async () => {
        const response = await call('POST', `/api/v1/containers/${containerId}/stop`);
        check(response.status === 200, `expected 200, got ${describe(response)}`);
        check(response.body.data.state === 'stopped', `expected stopped, got ${response.body.data.state}`);
      });

      await step('delete it', async () => {
        const response = await call('DELETE', `/api/v1/containers/${containerId}`);
        check(response.status === 200, `expected 200, got ${describe(response)}`);
        expectEnvelope(await call('GET', `/api/v1/containers/${containerId}`), 404, 'NOT_FOUND');
        containerId = undefined;
      });
    }

    const registered = await step('register an OAuth application', async () => {
      const response = await call('POST', '/api/v1/oauth/apps', {
        name: `smoke ${suffix}`,
        redirect_uris: ['https://smoke.example.com/callback'],
      });
      check(response.status === 200 || response.status === 201, `expected 200, got ${describe(response)}`);
      appId = response.body.data.id;
      check(typeof appId === 'string', 'expected the application id');
      check(typeof response.body.data.client_secret === 'string', 'expected the client secret, shown once');
    });

    if (registered) {
      await step('rotate its secret', async () => {
        const before = await call('GET', `/api/v1/oauth/apps/${appId}`);
        check(before.status === 200, `expected 200, got ${describe(before)}`);
        check(before.body.data.client_secret === undefined, 'the secret must not be shown again');
        const response = await call('POST', `/api/v1/oauth/apps/${appId}/secret`);
        check(response.status === 200, `expected 200, got ${describe(response)}`);
        check(typeof response.body.data.client_secret === 'string', 'expected the new client secret');
      });

      await step('delete it', async () => {
        const response = await call('DELETE', `/api/v1/oauth/apps/${appId}`);
        check(response.status === 200, `expected 200, got ${describe(response)}`);
        expectEnvelope(await call('GET', `/api/v1/oauth/apps/${appId}`), 404, 'NOT_FOUND');
        appId = undefined;
      });
    }
  } finally {
    // Whatever a failed step left behind.
    const cleanUp = async (what: string, path: string): Promise<void> => {
      const response = await call('DELETE', path).catch(() => undefined);
      const gone = response !== undefined && (response.status < 300 || response.status === 404);
      options.print(`cleanup: ${what} ${gone ? 'deleted' : `not deleted (${response ? describe(response) : 'no answer'})`}`);
      if (!gone) failed += 1;
    };
    if (containerId) await cleanUp(`container ${containerId}`, `/api/v1/containers/${containerId}`);
    if (appId) await cleanUp(`application ${appId}`, `/api/v1/oauth/apps/${appId}`);
  }
  options.print(`${passed} passed, ${failed} failed`);
  return failed === 0;
}

async function main(): Promise<number> {
  let values: { 'base-url'?: string; token?: string; 'timeout-seconds'?: string };
  try {
    ({ values } = parseArgs({
      options: { 'base-url': { type: 'string' }, token: { type: 'string' }, 'timeout-seconds': { type: 'string' } },
      strict: true,
    }));
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n${usage}`);
    return 2;
  }
  const baseUrl = values['base-url'];
  const token = values.token ?? process.env.SMOKE_TOKEN;
  const timeoutSeconds = Number(values['timeout-seconds'] ?? 180);
  if (!baseUrl || !/^https?:\/\//.test(baseUrl) || !token || !(timeoutSeconds > 0)) {
    console.error(usage);
    return 2;
  }
  const ok = await runSmoke({ baseUrl, token, timeoutMs: timeoutSeconds * 1000, print: (line) => console.log(line) });
  return ok ? 0 : 1;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = await main();
