import { randomUUID } from 'node:crypto';
import type { Role } from '../../lib/identity/principal.js';
import { contractProblem } from './contract-check.js';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  /** Sent as is, e.g. a form-encoded string. */
  rawBody?: string;
  headers?: Record<string, string>;
}

/**
 * A real HTTP call; JSON bodies are parsed when the response says JSON. An answer that
 * docs/openapi.json does not describe throws, so every e2e test checks the contract too.
 */
export async function call(baseUrl: string, method: string, path: string, options: CallOptions = {}): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers['authorization'] = `Bearer ${options.token}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body, redirect: 'manual' });
  const text = await response.text();
  const contentType = response.headers.get('content-type');
  const parsed = contentType?.includes('application/json') && text ? JSON.parse(text) : text;
  const problem = contractProblem(method, response.url || `${baseUrl}${path}`, response.status, contentType, parsed);
  if (problem) throw new Error(`${method} ${path}: ${problem}`);
  return { status: response.status, headers: response.headers, body: parsed, text };
}

export interface SignedInUser {
  userId: string;
  email: string;
  password: string;
  role: Role;
  /** The session token (`svss_…`), usable as a bearer credential. */
  sessionToken: string;
  csrfToken: string;
  /** Value for a Cookie header carrying the session. */
  cookie: string;
}

/** Creates a user straight in this test file's table and signs them in over HTTP. */
export async function signedInUser(baseUrl: string, role: Role = 'user'): Promise<SignedInUser> {
  const { identityService } = await import('../../lib/wiring/identity.js');
  const email = `${role}-${randomUUID()}@example.com`;
  const password = `pw-${randomUUID()}`;
  const user = await identityService.createUser({ email, password, role });
  const response = await call(baseUrl, 'POST', '/api/v1/sessions', { body: { email, password } });
  if (response.status !== 200) throw new Error(`sign-in failed: ${response.status} ${response.text}`);
  const { token, csrf_token: csrfToken } = response.body.data;
  return { userId: user.id, email, password, role, sessionToken: token, csrfToken, cookie: `sv_session=${token}` };
}

/** Call options that authenticate as the user's session, with its CSRF token unless told not to. */
export const asSession = (who: SignedInUser, withCsrf = true): { token: string; headers: Record<string, string> } => ({
  token: who.sessionToken,
  headers: withCsrf ? { 'x-csrf-token': who.csrfToken } : {},
});

/** A personal access token for a signed-in user, created over HTTP. */
export async function personalAccessToken(baseUrl: string, user: SignedInUser, name = 'test'): Promise<string> {
  const response = await call(baseUrl, 'POST', '/api/v1/tokens', {
    token: user.sessionToken,
    headers: { 'x-csrf-token': user.csrfToken },
    body: { name },
  });
  if (response.status !== 200) throw new Error(`token creation failed: ${response.status} ${response.text}`);
  return response.body.data.token;
}

const isFieldProblem = (problem: unknown): boolean =>
  typeof problem === 'object' &&
  problem !== null &&
  Object.keys(problem).sort().join() === 'field,message' &&
  Object.values(problem).every((value) => typeof value === 'string' && value !== '');

/**
 * The envelope every failure uses: `{ error: { code, message } }`, and `details` only when the
 * error names fields (a non-empty list of `{ field, message }`).
 */
export const errorEnvelope = (code: string) => ({
  error: {
    asymmetricMatch: (error: Record<string, unknown>) =>
      typeof error === 'object' &&
      error !== null &&
      error.code === code &&
      typeof error.message === 'string' &&
      Object.keys(error).every((key) => ['code', 'message', 'details'].includes(key)) &&
      (!('details' in error) || (Array.isArray(error.details) && error.details.length > 0 && error.details.every(isFieldProblem))),
    toString: () => `ErrorEnvelope<${code}>`,
  },
});

/** The fields a 400 (or a 409) names in its envelope's `details`. */
export const detailFields = (body: { error?: { details?: Array<{ field: string }> } }): string[] =>
  (body.error?.details ?? []).map((problem) => problem.field);
