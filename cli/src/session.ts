import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { ErrorEnvelope, FieldProblem, OAuthErrorBody, TokenResponse } from '../../lib/http/api-types.js';
import { CliError, EXIT } from './errors.js';
import { type Answer, assertTransportAllowed, sendSameOrigin } from './transport.js';

/**
 * Where `container-hosting` keeps its sign-ins: one entry per API URL, in
 * `$XDG_CONFIG_HOME/container-hosting/credentials.json` (default `~/.config/…`), mode 0600.
 */

/** The service's own public client, created by every stack on first use (docs/oauth.md, "Device authorization"). */
export const CLI_CLIENT_ID = '00000000-0000-7000-8000-00000000c11e';
export const CLI_SCOPES = 'containers:read containers:write';
export const DEFAULT_API = 'http://127.0.0.1:3000';
/** Refresh this long before the access token runs out, so a request never carries a dying one. */
const EXPIRY_MARGIN_MS = 30_000;

export interface SignIn {
  client_id: string;
  access_token: string;
  refresh_token: string;
  expires_at: string;
  scope: string;
}

interface Credentials {
  apis: Record<string, SignIn>;
  /** The API last signed in to, kept after logout. */
  current?: string;
}

/** A failure from the API: the envelope's message and code, and the fields it names. */
export class ApiError extends CliError {
  constructor(
    message: string,
    code: string,
    readonly details: readonly FieldProblem[],
  ) {
    super(message, { code });
  }
}

export const configDirectory = () => join(process.env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'container-hosting');
export const credentialsPath = () => join(configDirectory(), 'credentials.json');

export function readCredentials(): Credentials {
  try {
    const read = JSON.parse(readFileSync(credentialsPath(), 'utf8')) as Partial<Credentials>;
    return { ...read, apis: read.apis ?? {} };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { apis: {} };
    throw new CliError(`Cannot read ${credentialsPath()}: ${(error as Error).message}`);
  }
}

/** Written whole to a temporary file with mode 0600 and renamed over the old one, so a crash never leaves half a file. */
function writeCredentials(credentials: Credentials): void {
  mkdirSync(configDirectory(), { recursive: true, mode: 0o700 });
  const temporary = `${credentialsPath()}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, credentialsPath());
}

/**
 * `--api`, then CONTAINER_HOSTING_API, then the API last signed in to, then the local stack;
 * refused before any request when credentials would cross the network in the clear.
 */
export function apiUrlOf(option: string | undefined, insecure = false): string {
  const chosen = option || process.env.CONTAINER_HOSTING_API || readCredentials().current || DEFAULT_API;
  let url: URL;
  try {
    url = new URL(chosen);
  } catch {
    throw new CliError(`--api must be a URL, e.g. ${DEFAULT_API}`, { exitCode: EXIT.usage });
  }
  assertTransportAllowed(url, insecure);
  return url.toString().replace(/\/+$/, '');
}

/** A form post to an OAuth endpoint; answers the parsed body with the status. */
export async function oauthForm<Body>(
  api: string,
  path: string,
  fields: Record<string, string>,
): Promise<{ status: number; body: Body & Partial<OAuthErrorBody> }> {
  const response = await sendSameOrigin(new URL(`${api}${path}`), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams(fields).toString(),
  });
  const body = (await response.json().catch(() => ({}))) as Body & Partial<OAuthErrorBody>;
  return { status: response.status, body };
}

const savedTokens = (tokens: TokenResponse, now = Date.now()): SignIn => ({
  client_id: CLI_CLIENT_ID,
  access_token: tokens.access_token,
  refresh_token: tokens.refresh_token ?? '',
  expires_at: new Date(now + tokens.expires_in * 1000).toISOString(),
  scope: tokens.scope,
});

export function saveSignIn(api: string, tokens: TokenResponse): void {
  const credentials = readCredentials();
  credentials.apis = { ...credentials.apis, [api]: savedTokens(tokens) };
  credentials.current = api;
  writeCredentials(credentials);
}

/** Forgets the sign-in but not the API: the next command still talks to it and names it (`Not signed in to …`). */
export function forgetSignIn(api: string): void {
  const credentials = readCredentials();
  delete credentials.apis[api];
  writeCredentials(credentials);
}

/** Uses the refresh token once and stores the rotated pair (docs/oauth.md: a refresh token works once). */
async function refreshed(api: string, entry: SignIn): Promise<SignIn> {
  const { status, body } = await oauthForm<TokenResponse>(api, '/api/v1/oauth/token', {
    grant_type: 'refresh_token',
    refresh_token: entry.refresh_token,
    client_id: entry.client_id ?? CLI_CLIENT_ID,
  });
  if (status !== 200) {
    forgetSignIn(api);
    throw new CliError(`Your sign-in to ${api} has ended (${body.error ?? status}); run: container-hosting login --api ${api}`, {
      code: 'UNAUTHORIZED',
    });
  }
  const credentials = readCredentials();
  const saved = savedTokens(body);
  credentials.apis = { ...credentials.apis, [api]: saved };
  writeCredentials(credentials);
  return saved;
}

/** The bearer token for a request: CONTAINER_HOSTING_TOKEN (a personal access token) when set, else the stored sign-in, refreshed when due. */
async function bearerFor(api: string, { forceRefresh = false } = {}): Promise<string> {
  if (process.env.CONTAINER_HOSTING_TOKEN) return process.env.CONTAINER_HOSTING_TOKEN;
  const entry = readCredentials().apis[api];
  if (!entry) throw new CliError(`Not signed in to ${api}; run: container-hosting login --api ${api}`, { code: 'UNAUTHORIZED' });
  if (forceRefresh || Date.parse(entry.expires_at) - EXPIRY_MARGIN_MS <= Date.now()) return (await refreshed(api, entry)).access_token;
  return entry.access_token;
}

export type Query = Record<string, string | number | undefined>;

/**
 * One API call with the service's envelope: resolves `{ data, headers }`, throws an ApiError
 * carrying the envelope's message, code and details. A 401 with a stored sign-in is retried once after a refresh.
 */
export async function apiCall<Data>(
  api: string,
  method: string,
  path: string,
  { body, query, signal }: { body?: unknown; query?: Query; signal?: AbortSignal } = {},
): Promise<{ data: Data; headers: Answer['headers'] }> {
  const url = new URL(`${api}${path}`);
  for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
  const attempt = async (token: string) =>
    sendSameOrigin(url, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal,
    });
  let response = await attempt(await bearerFor(api));
  if (response.status === 401 && !process.env.CONTAINER_HOSTING_TOKEN)
    response = await attempt(await bearerFor(api, { forceRefresh: true }));
  // A read the service asks to slow down (429 or 503 with Retry-After) waits as told and is asked again.
  for (let retries = 0; method === 'GET' && retries < 5; retries += 1) {
    const wait = retryAfterSeconds(response);
    if (wait === undefined) break;
    await new Promise((resolve) => setTimeout(resolve, wait * 1000));
    response = await attempt(await bearerFor(api));
  }
  const text = await response.text();
  let parsed: Partial<ErrorEnvelope> & { data?: Data };
  try {
    parsed = text ? JSON.parse(text) : {};
  } catch {
    parsed = {};
  }
  if (!response.ok) {
    const error = parsed.error;
    throw new ApiError(error?.message ?? `HTTP ${response.status}`, error?.code ?? `HTTP_${response.status}`, error?.details ?? []);
  }
  return { data: parsed.data as Data, headers: response.headers };
}

/** Seconds a 429 or 503 asks the client to wait (Retry-After in seconds, at most a minute); undefined otherwise. */
function retryAfterSeconds(response: Answer): number | undefined {
  if (response.status !== 429 && response.status !== 503) return undefined;
  const seconds = Number(response.headers.get('retry-after'));
  return seconds > 0 ? Math.min(seconds, 60) : undefined;
}

/** Every page of a list, following `Link: <…>; rel="next"` (on the API's own origin only). */
export async function apiList<Item>(api: string, path: string, query: Query): Promise<Item[]> {
  const items: Item[] = [];
  let next: { path: string; query: Query } | undefined = { path, query };
  while (next) {
    const { data, headers }: { data: Item[]; headers: Answer['headers'] } = await apiCall<Item[]>(api, 'GET', next.path, {
      query: next.query,
    });
    items.push(...data);
    const link = /<([^>]+)>;\s*rel="next"/.exec(headers.get('link') ?? '');
    if (!link) break;
    const url = new URL(link[1]!, api);
    if (url.origin !== new URL(api).origin) throw new CliError(`${api} pointed its next page at another origin (${url.origin})`);
    next = { path: url.pathname.slice(new URL(api).pathname.replace(/\/$/, '').length), query: Object.fromEntries(url.searchParams) };
  }
  return items;
}
