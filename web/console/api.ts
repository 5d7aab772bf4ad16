/** The console talks to the JSON API like any client: the session cookie, and x-csrf-token on writes. */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

let basePath = '';
let csrfToken = '';

export const setBasePath = (path: string): void => {
  basePath = path;
};
export const base = (): string => basePath;

/** Where this page is, without the stage prefix: what `/login?next=` takes. */
export const currentPath = (): string => `${location.pathname.slice(basePath.length)}${location.search}`;

export const signInAgain = (): void => {
  location.assign(`${basePath}/login?next=${encodeURIComponent(currentPath())}`);
};

export interface Reply<T> {
  data: T;
  headers: Headers;
}

/**
 * When the service last said to slow down (429 or 503 with Retry-After), the page's reads wait
 * until then: every poll goes through here, so one place honours it for all of them.
 */
let readsWaitUntil = 0;

export async function request<T>(method: string, path: string, body?: unknown): Promise<Reply<T>> {
  if (method === 'GET' && Date.now() < readsWaitUntil) throw new ApiError(429, 'RATE_LIMITED', 'Waiting as the service asked');
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  const response = await fetch(`${basePath}${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (response.status === 401) {
    signInAgain();
    throw new ApiError(401, 'UNAUTHORIZED', 'You are signed out');
  }
  const retryAfter = Number(response.headers.get('retry-after'));
  if ((response.status === 429 || response.status === 503) && retryAfter > 0) readsWaitUntil = Date.now() + Math.min(retryAfter, 60) * 1000;
  const text = await response.text();
  const parsed = text ? JSON.parse(text) : null;
  if (!response.ok) {
    throw new ApiError(
      response.status,
      parsed?.error?.code ?? 'ERROR',
      parsed?.error?.message ?? `The service answered ${response.status}`,
    );
  }
  return { data: parsed?.data as T, headers: response.headers };
}

export const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => (await request<T>(method, path, body)).data;

export interface Session {
  user: { id: string; email: string; role: string };
  csrf_token: string;
}

export async function loadSession(): Promise<Session> {
  const session = await api<Session>('GET', '/api/v1/sessions/current');
  csrfToken = session.csrf_token;
  return session;
}

/**
 * The fields an error names: the envelope's message reads `Invalid request body: memory_mb: …;
 * env.FOO: …`, and a taken hostname is a conflict about the hostname. Messages that name no
 * field go under `form`.
 */
export function fieldErrors(error: unknown): Record<string, string> {
  if (!(error instanceof ApiError)) return { form: 'Something went wrong; try again.' };
  const errors: Record<string, string> = {};
  const match = /^Invalid request body: (.*)$/.exec(error.message);
  if (match) {
    for (const part of (match[1] ?? '').split('; ')) {
      const named = /^([a-z_]+)(?:[.[][^:]*)?: (.*)$/.exec(part);
      if (named) errors[named[1]!] = errors[named[1]!] ? `${errors[named[1]!]}; ${named[2]}` : named[2]!;
      else errors.form = part;
    }
    return errors;
  }
  if (error.code === 'CONFLICT' && /hostname/i.test(error.message)) return { hostname: error.message };
  const mentioned = /^(cpu_cores|memory_mb|disk_gb|port|image|command|env|hostname)\b/.exec(error.message);
  if (mentioned) return { [mentioned[1]!]: error.message };
  return { form: error.message };
}
