import { afterAll, beforeAll } from 'vitest';
import type { Role } from '../../lib/identity/principal.js';
import { runShutdown } from '../../lib/local/lifecycle.js';
import { startLocalServer } from '../../lib/local/server.js';
import { type ApiResponse, call, personalAccessToken, type SignedInUser, signedInUser } from './api-client.js';
import { freePort } from './free-port.js';

export interface TestStack {
  baseUrl: string;
  close(): Promise<void>;
}

/**
 * The local server in-process on a random port, against this test file's table and
 * container directory (set by setup-env). close() also runs the shutdown registry, which
 * stops any containers the tests started.
 */
export async function startTestStack(): Promise<TestStack> {
  // Containers' url names the stack's port, and lib/config reads it when the first handler loads.
  const port = await freePort();
  process.env.APPS_DOMAIN = `localhost:${port}`;
  process.env.APPS_URL_SCHEME = 'http';
  // The stack's own address, as scripts/local.ts sets it: the issuer and every absolute URL.
  process.env.PUBLIC_BASE_URL = `http://127.0.0.1:${port}`;
  // Loaded after the configuration it reads at module load is set.
  const { localContainerHosting } = await import('../../lib/wiring/local-hosting.js');
  const server = await startLocalServer({ host: '127.0.0.1', port, containers: localContainerHosting });
  return {
    baseUrl: server.url,
    close: async () => {
      await server.close();
      await runShutdown();
    },
  };
}

/** A test file's stack: started before its first test, closed after its last. */
export interface StackInUse {
  /** The stack's address; read it in a hook or a test, once the file's beforeAll has run. */
  readonly baseUrl: string;
}

/** A stack in use with a signed-in user and a personal access token of theirs. */
export interface SignedInStack extends StackInUse {
  readonly user: SignedInUser;
  /** The user's personal access token. */
  readonly token: string;
  /** A call to the API as the user's token, or as `as` (another token, or a session's options). */
  api(method: string, path: string, body?: unknown, as?: string): Promise<ApiResponse>;
  /** A container's record as the API answers it to the user. */
  container(id: string): Promise<Record<string, any>>;
}

/**
 * Starts this file's stack in a beforeAll and closes it in an afterAll (then runs `afterClose`,
 * e.g. to remove engine volumes). Hooks the file registers later run after it starts and
 * before it closes (vitest runs before-hooks in order, after-hooks in reverse).
 */
export function useStack(options: { afterClose?: () => Promise<void> } = {}): StackInUse {
  let started: TestStack | undefined;
  beforeAll(async () => {
    started = await startTestStack();
  });
  afterAll(async () => {
    await started?.close();
    await options.afterClose?.();
  });
  return {
    get baseUrl() {
      if (!started) throw new Error('the stack starts in beforeAll: read baseUrl in a hook or a test');
      return started.baseUrl;
    },
  };
}

/** useStack, with a user of `role` signed in and given a personal access token once the stack has started. */
export function useSignedInStack(options: { role?: Role; afterClose?: () => Promise<void> } = {}): SignedInStack {
  const stack = useStack(options);
  let user: SignedInUser | undefined;
  let token: string | undefined;
  beforeAll(async () => {
    user = await signedInUser(stack.baseUrl, options.role);
    token = await personalAccessToken(stack.baseUrl, user);
  });
  const signedIn = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the user signs in in beforeAll: read it in a hook or a test');
    return value;
  };
  const api = (method: string, path: string, body?: unknown, as = signedIn(token)) =>
    call(stack.baseUrl, method, path, { token: as, body });
  return {
    get baseUrl() {
      return stack.baseUrl;
    },
    get user() {
      return signedIn(user);
    },
    get token() {
      return signedIn(token);
    },
    api,
    container: async (id) => (await api('GET', `/api/v1/containers/${id}`)).body.data,
  };
}
