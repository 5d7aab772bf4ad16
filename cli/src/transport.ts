import { CliError, EXIT } from './errors.js';

/**
 * How the CLI talks to an API without giving its credentials away (issue 25, item 6): plain
 * http only to this machine unless asked, and no request, with or without credentials, follows
 * a redirect to another origin (RFC 9110 section 15.4: a client decides whether to follow).
 */

/** Redirects followed on the API's own origin before giving up. */
const MAX_REDIRECTS = 5;

/** This machine: 127.0.0.0/8, ::1 and the name localhost (RFC 6761 section 6.3). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === 'localhost' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * Refuses, before any request, an API a credential should not be sent to: a scheme other than
 * http(s), or plain http to another machine, where anyone on the path reads the bearer token,
 * unless the person said `--insecure`.
 */
export function assertTransportAllowed(api: URL, insecure: boolean): void {
  if (api.protocol !== 'https:' && api.protocol !== 'http:') {
    throw new CliError(`--api must be an http or https URL, got ${api.protocol}`, { exitCode: EXIT.usage });
  }
  if (api.protocol === 'http:' && !isLoopbackHost(api.hostname) && !insecure) {
    throw new CliError(
      `Refusing to send credentials over plain http to ${api.host}: anyone on the network path could read them. ` +
        'Use https, or pass --insecure if you accept that risk.',
      { code: 'INSECURE_TRANSPORT', exitCode: EXIT.usage },
    );
  }
}

/** What a request may carry when it is sent again to the same origin after a redirect. */
export interface Request {
  method: string;
  headers: Record<string, string>;
  body?: string;
  /** Ends the wait for an answer the CLI no longer needs (a start whose image pull already failed). */
  signal?: AbortSignal;
}

async function sendOnce(url: URL, request: Request): Promise<Response> {
  try {
    return await fetch(url, { ...request, redirect: 'manual' });
  } catch (error) {
    if (request.signal?.aborted) throw error;
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
    throw new CliError(`Cannot reach ${url.origin}: ${cause}`, { code: 'NETWORK_ERROR' });
  }
}

/**
 * Sends a request and follows redirects only on its own origin (scheme, host and port), as the
 * Fetch standard would for 301, 302, 303, 307 and 308 (a 303, or a 301/302 of a POST, becomes a
 * GET without a body). A redirect to another origin is refused before anything is sent there:
 * the request carries a bearer token or an OAuth secret (refresh token, device code) in its
 * headers or body, and a mere 307 must not forward it.
 */
export async function sendSameOrigin(url: URL, request: Request): Promise<Response> {
  let current = url;
  let next = request;
  for (let hop = 0; ; hop += 1) {
    const response = await sendOnce(current, next);
    if (![301, 302, 303, 307, 308].includes(response.status)) return response;
    const location = response.headers.get('location');
    if (!location) return response;
    const target = new URL(location, current);
    if (target.origin !== url.origin) {
      throw new CliError(`${url.origin} redirected to another origin (${target.origin}); not following it with your credentials`, {
        code: 'REDIRECTED_AWAY',
      });
    }
    if (hop >= MAX_REDIRECTS)
      throw new CliError(`${url.origin} redirected more than ${MAX_REDIRECTS} times`, { code: 'TOO_MANY_REDIRECTS' });
    await response.body?.cancel();
    const becomesGet = response.status === 303 || ((response.status === 301 || response.status === 302) && next.method === 'POST');
    if (becomesGet) {
      const { 'content-type': _dropped, ...headers } = next.headers;
      next = { method: 'GET', headers, signal: next.signal };
    }
    current = target;
  }
}
