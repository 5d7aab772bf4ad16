import { LOOPBACK_HOSTNAMES } from '../http/cookies.js';

const MAX_REDIRECT_URI_LENGTH = 2000;

export interface RedirectUriRules {
  /** http on a loopback host; the local stack allows it, an AWS stage does not by default. */
  allowInsecureLoopback: boolean;
}

/**
 * Why a redirect URI cannot be registered, or `undefined` when it can (docs/oauth.md,
 * RFC 6749 section 3.1.2): absolute, no fragment, https, or http on loopback when allowed.
 * It is later compared to the authorize request's `redirect_uri` as an exact string.
 */
export function redirectUriProblem(uri: string, rules: RedirectUriRules): string | undefined {
  if (uri.length > MAX_REDIRECT_URI_LENGTH) return `must be at most ${MAX_REDIRECT_URI_LENGTH} characters`;
  if (/[\s\u0000-\u001f\u007f]/.test(uri)) return 'must not contain whitespace or control characters';
  if (uri.includes('#')) return 'must not contain a fragment';
  // `https:host` parses, but only `scheme://authority` is an absolute URL a client can match exactly.
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(uri)) return 'must be an absolute URL';
  let parsed: URL;
  try {
    parsed = new URL(uri);
  } catch {
    return 'must be an absolute URL';
  }
  if (parsed.username || parsed.password) return 'must not contain credentials';
  if (parsed.protocol === 'https:') return parsed.hostname ? undefined : 'must name a host';
  // RFC 8252 section 7.3: native and development clients may use plain http on loopback.
  if (parsed.protocol === 'http:' && LOOPBACK_HOSTNAMES.has(parsed.hostname)) {
    return rules.allowInsecureLoopback ? undefined : 'must use https (http loopback URIs are not allowed here)';
  }
  return 'must use https (http only on localhost, 127.0.0.1 or [::1] where allowed)';
}

/** An http redirect URI on a loopback IP literal: its host, optional port, and the rest as written. */
const LOOPBACK_IP_REDIRECT = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::(\d{1,5}))?([/?].*)?$/;

function withoutLoopbackPort(uri: string): string | undefined {
  const match = LOOPBACK_IP_REDIRECT.exec(uri);
  if (!match) return undefined;
  const port = match[2] === undefined ? undefined : Number(match[2]);
  if (port !== undefined && (port < 1 || port > 65_535)) return undefined;
  return `http://${match[1]}${match[3] ?? ''}`;
}

/**
 * Whether the authorize request's `redirect_uri` is one the client registered: the same string,
 * character for character (RFC 6749 section 3.1.2.3), except that a public client's http URI on a
 * loopback IP literal matches with any port, because a native app listens on whichever port the
 * system gives it at the time of the request (RFC 8252 section 7.3). `localhost` stays exact
 * (section 8.3 advises against it), and so does every URI of a confidential client.
 */
export function isRegisteredRedirectUri(registered: readonly string[], presented: string, publicClient: boolean): boolean {
  if (registered.includes(presented)) return true;
  if (!publicClient) return false;
  const portless = withoutLoopbackPort(presented);
  return portless !== undefined && registered.some((uri) => withoutLoopbackPort(uri) === portless);
}
