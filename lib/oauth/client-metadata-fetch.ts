import { lookup } from 'node:dns/promises';
import { request } from 'node:https';
import { isIP } from 'node:net';
import { InvalidClientError } from '../errors.js';
import { isPublicAddress } from './public-address.js';

/**
 * A client metadata document as fetched: its JSON text and how long it may be cached. The fetch
 * follows draft-ietf-oauth-client-id-metadata-document (-02,
 * https://www.ietf.org/archive/id/draft-ietf-oauth-client-id-metadata-document-02.html): https
 * only, a 200 answer only and no redirects (section 5), at most 5 KiB (section 8.7), and never to
 * an address the service's own network could reach in its stead (SSRF, section 8.6).
 */
export interface FetchedDocument {
  text: string;
  /** From Cache-Control: `max-age` seconds, 0 for `no-store`/`no-cache`, undefined when it says neither. */
  maxAgeSeconds: number | undefined;
}

export interface FetchRules {
  /** `host:port` entries admitted though their address is not public (OAUTH_CLIENT_METADATA_ALLOWED_HOSTS). */
  allowedHosts: ReadonlySet<string>;
  timeoutMs: number;
  maxBytes: number;
}

export const refused = (why: string): InvalidClientError =>
  new InvalidClientError(`invalid_client: the client metadata document at client_id ${why}`, false);

/** The address to connect to: resolved once, checked, and then the only one the socket may use (no DNS rebinding). */
async function checkedAddress(url: URL, rules: FetchRules): Promise<string> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const admitted = rules.allowedHosts.has(`${url.hostname.toLowerCase()}:${url.port || '443'}`);
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
    } catch {
      throw refused(`could not be fetched: ${url.hostname} does not resolve`);
    }
  }
  if (!admitted && (addresses.length === 0 || !addresses.every(isPublicAddress))) {
    throw refused(`is on a non-public address (loopback, private, link-local or reserved); it is not fetched`);
  }
  // IPv4 first, as a server listening on `localhost` usually does.
  return [...addresses].sort((a, b) => isIP(a) - isIP(b))[0]!;
}

/**
 * GETs the document with no credentials and no cookies, at most `maxBytes`, within `timeoutMs`
 * from the DNS lookup to the last byte. The TLS session names the URL's host (SNI and certificate
 * check) while the socket goes to the checked address. Every failure is an `invalid_client` that
 * says what was wrong; none is a 500 and none waits past the timeout.
 */
export async function fetchClientMetadataDocument(url: URL, rules: FetchRules): Promise<FetchedDocument> {
  const deadline = AbortSignal.timeout(rules.timeoutMs);
  const address = await Promise.race([
    checkedAddress(url, rules),
    new Promise<never>((_, reject) => deadline.addEventListener('abort', () => reject(refused('did not answer in time')))),
  ]);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise<FetchedDocument>((resolve, reject) => {
    const outgoing = request(
      {
        host: address,
        port: Number(url.port || 443),
        path: `${url.pathname}${url.search}`,
        method: 'GET',
        ...(isIP(host) ? {} : { servername: host }),
        headers: { host: url.host, accept: 'application/json', 'user-agent': 'container-hosting-oauth' },
        agent: false,
        signal: deadline,
      },
      (response) => {
        const status = response.statusCode ?? 0;
        if (status >= 300 && status < 400) {
          response.destroy();
          return reject(refused(`redirected (${status}); redirects are not followed`));
        }
        if (status !== 200) {
          response.destroy();
          return reject(refused(`answered ${status}, not 200`));
        }
        if (!/^application\/([\w.+-]+\+)?json\b/i.test(response.headers['content-type'] ?? '')) {
          response.destroy();
          return reject(refused('is not JSON (Content-Type application/json)'));
        }
        const tooLarge = () => refused(`is larger than ${rules.maxBytes / 1024} KiB`);
        if (Number(response.headers['content-length'] ?? 0) > rules.maxBytes) {
          response.destroy();
          return reject(tooLarge());
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > rules.maxBytes) {
            response.destroy();
            reject(tooLarge());
            return;
          }
          chunks.push(chunk);
        });
        response.on('error', () => reject(refused('could not be read to its end')));
        response.on('end', () =>
          resolve({
            text: Buffer.concat(chunks).toString('utf8'),
            maxAgeSeconds: maxAgeOf(String(response.headers['cache-control'] ?? '')),
          }),
        );
      },
    );
    outgoing.on('socket', (socket) => {
      // The connection must be to the address that was checked, whatever a resolver says by now.
      socket.on('connect', () => {
        if (socket.remoteAddress?.replace(/^::ffff:/, '') !== address.replace(/^::ffff:/, '')) outgoing.destroy();
      });
    });
    outgoing.on('error', (error) =>
      reject(
        deadline.aborted
          ? refused('did not answer in time')
          : refused(`could not be fetched (${'code' in error && typeof error.code === 'string' ? error.code : 'TLS or network error'})`),
      ),
    );
    outgoing.end();
  });
}

/** RFC 9111 section 5.2.2: `no-store` and `no-cache` mean no reuse; `max-age` says how long. */
function maxAgeOf(cacheControl: string): number | undefined {
  if (/\b(no-store|no-cache)\b/i.test(cacheControl)) return 0;
  const match = /\bmax-age\s*=\s*"?(\d+)"?/i.exec(cacheControl);
  return match ? Number(match[1]) : undefined;
}
