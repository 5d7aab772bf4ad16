import type { ErrorEnvelope, FieldProblem, SessionRecord } from './contract.js';

/** The console talks to the JSON API like any client: the session cookie, and x-csrf-token on writes. */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The fields the request got wrong, from the envelope's `details`. */
    readonly details: readonly FieldProblem[] = [],
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
    const error = (parsed as Partial<ErrorEnvelope> | null)?.error;
    throw new ApiError(
      response.status,
      error?.code ?? 'ERROR',
      error?.message ?? `The service answered ${response.status}`,
      error?.details,
    );
  }
  return { data: parsed?.data as T, headers: response.headers };
}

export const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => (await request<T>(method, path, body)).data;

export type Session = SessionRecord;

export async function loadSession(): Promise<Session> {
  const session = await api<Session>('GET', '/api/v1/sessions/current');
  csrfToken = session.csrf_token;
  return session;
}

/**
 * The errors to show beside each field of a form, by the field's path, from the envelope's
 * `details`: a detail goes to the deepest field the form shows that is it or holds it (`env.FOO`
 * to the env editor, with the variable's name before the message). What names no field the
 * form shows is under `form`. The message is never parsed.
 * @param shown the paths of the fields the form shows; without them, each top-level name.
 */
export function fieldErrors(error: unknown, shown?: readonly string[]): Record<string, string> {
  if (!(error instanceof ApiError)) return { form: 'Something went wrong; try again.' };
  if (error.details.length === 0) return { form: error.message };
  const errors: Record<string, string> = {};
  const add = (key: string, message: string) => {
    errors[key] = errors[key] ? `${errors[key]}; ${message}` : message;
  };
  for (const problem of error.details) {
    const holders = (shown ?? [problem.field.split('.')[0]!]).filter(
      (path) => problem.field === path || problem.field.startsWith(`${path}.`),
    );
    const holder = holders.sort((a, b) => b.length - a.length)[0];
    if (holder === undefined) add('form', `${problem.field}: ${problem.message}`);
    else add(holder, holder === problem.field ? problem.message : `${problem.field.slice(holder.length + 1)}: ${problem.message}`);
  }
  return errors;
}
