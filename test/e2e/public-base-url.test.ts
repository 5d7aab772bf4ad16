import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { signedInUser } from '../support/api-client.js';
import { useStack } from '../support/local-stack.js';

/**
 * Issue 18 item 5: the issuer and every absolute URL come from PUBLIC_BASE_URL (the local stack's
 * own address), never from the Host or X-Forwarded-* headers a client writes.
 */
const stack = useStack();

const FORGED = { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' };

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A request with headers fetch would not let a test forge (Host). */
function forgedRequest(path: string, headers: Record<string, string>): Promise<Answer> {
  const target = new URL(stack.baseUrl);
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: target.hostname, port: target.port, path, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

describe('the public base URL', () => {
  it('is the issuer and the base of every endpoint in the OAuth metadata, whatever Host says', async () => {
    const answer = await forgedRequest('/.well-known/oauth-authorization-server', FORGED);
    const metadata = JSON.parse(answer.text);
    expect(answer.status).toBe(200);
    expect(metadata.issuer).toBe(stack.baseUrl);
    for (const name of ['authorization_endpoint', 'token_endpoint', 'revocation_endpoint']) {
      expect(metadata[name]).toMatch(new RegExp(`^${stack.baseUrl}/api/v1/oauth/`));
    }
    expect(answer.text).not.toContain('evil.example');
  });

  it('is the base of the Link header of a list, whatever Host says', async () => {
    const admin = await signedInUser(stack.baseUrl, 'admin');
    await signedInUser(stack.baseUrl);
    const answer = await forgedRequest('/api/v1/users?limit=1', { ...FORGED, authorization: `Bearer ${admin.sessionToken}` });
    expect(answer.status).toBe(200);
    expect(answer.headers.link).toMatch(new RegExp(`^<${stack.baseUrl}/api/v1/users\\?limit=1&cursor=[^>]+>; rel="next"$`));
  });

  it('keeps redirects to the sign-in page on the service, whatever Host says', async () => {
    const answer = await forgedRequest('/settings/authorizations', FORGED);
    expect(answer.status).toBe(302);
    expect(answer.headers.location).toMatch(/^\/login\?next=/);
  });
});
