/** What an endpoint function returns; the endpoint wrapper turns it into the Lambda result. */
export interface Reply {
  statusCode: number;
  headers: Record<string, string>;
  cookies?: string[];
  body: string;
}

/** RFC 6797: one year, subdomains included (docs/security.md, "Security"); sent outside loopback (transport-security.ts). */
export const HSTS_VALUE = 'max-age=31536000; includeSubDomains';

const JSON_TYPE = 'application/json; charset=utf-8';

/** `200 { data }`, the success envelope. */
export function ok(data: unknown, headers: Record<string, string> = {}, cookies?: string[]): Reply {
  return json(200, { data }, headers, cookies);
}

/** A JSON body as is, for the few responses that are not enveloped (the OAuth token endpoint). */
export function json(statusCode: number, body: unknown, headers: Record<string, string> = {}, cookies?: string[]): Reply {
  return { statusCode, headers: { 'Content-Type': JSON_TYPE, ...headers }, body: JSON.stringify(body), ...(cookies ? { cookies } : {}) };
}

/**
 * Headers every HTML page sends (docs/api-rules.md): no framing, no referrer, no caching. The
 * forms post to this origin, whose redirects may go on to an OAuth client: any https one, or a
 * native app on loopback (RFC 8252 section 7.3). `http://[::1]:*` is not among them: CSP cannot
 * name an IPv6 address, and Chromium logs the source as invalid on every page; the consent page
 * reaches such a client another way (lib/pages/consent-page.ts, `backToClient`).
 */
export const PAGE_SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self' https: http://localhost:* http://127.0.0.1:*; frame-ancestors 'none'; base-uri 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

export function html(statusCode: number, markup: string, headers: Record<string, string> = {}, cookies?: string[]): Reply {
  return {
    statusCode,
    headers: { 'Content-Type': 'text/html; charset=utf-8', ...PAGE_SECURITY_HEADERS, ...headers },
    body: markup,
    ...(cookies ? { cookies } : {}),
  };
}

export function redirect(location: string, statusCode: 302 | 303 = 302, cookies?: string[], headers: Record<string, string> = {}): Reply {
  return {
    statusCode,
    headers: { Location: location, 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer', ...headers },
    body: '',
    ...(cookies ? { cookies } : {}),
  };
}

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&#39;');
}
