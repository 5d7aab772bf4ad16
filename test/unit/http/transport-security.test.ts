import type { APIGatewayProxyResult } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import { endpoint } from '../../../lib/http/endpoint.js';
import * as route from '../../../lib/http/routes.js';
import { ok } from '../../../lib/http/reply.js';
import { clearedSessionCookie, sessionCookie } from '../../../lib/http/session-cookie.js';
import { servedOnLoopback } from '../../../lib/http/transport-security.js';
import type { Authentication } from '../../../lib/identity/authentication.js';
import type { Principal } from '../../../lib/identity/principal.js';
import { newLoginCsrf } from '../../../lib/pages/login-page.js';
import { lambdaContext, proxyEvent } from '../../support/lambda-event.js';

const session: Principal = {
  userId: 'u-1',
  role: 'user',
  kind: 'session',
  scopes: ['containers:read', 'containers:write'],
  credentialHash: 'h',
  expiresAt: '2999-01-01T00:00:00.000Z',
  csrfToken: 'csrf-good',
};
const resolve = vi.fn(
  async (token: string): Promise<Authentication | undefined> => (token === 'svss_session' ? { principal: session } : undefined),
);
const getMe = endpoint(route.getMe, { resolveCredential: resolve }, async () => ok({ token: 'secret' }));

const AWS_HOST = { domainName: 'api.example.com' };
async function call(headers: Record<string, string>, requestContext: object = {}): Promise<APIGatewayProxyResult> {
  const event = proxyEvent({ path: '/api/v1/users/me', headers });
  Object.assign(event.requestContext, requestContext);
  return getMe(event as never, lambdaContext() as never);
}

describe('Cache-Control: no-store on every API response (issue 7 item 3)', () => {
  it('sends no-store on a success envelope', async () => {
    const result = await call({ Authorization: 'Bearer svss_session' });
    expect(result.statusCode).toBe(200);
    expect(result.headers?.['Cache-Control']).toBe('no-store');
  });

  it('sends no-store on an error envelope', async () => {
    const result = await call({});
    expect(result.statusCode).toBe(401);
    expect(result.headers?.['Cache-Control']).toBe('no-store');
  });
});

describe('HSTS outside loopback (issue 7 item 7)', () => {
  it('sends Strict-Transport-Security on success and error responses served on a public host', async () => {
    const https = { 'X-Forwarded-Proto': 'https' };
    for (const result of [await call({ ...https, Authorization: 'Bearer svss_session' }, AWS_HOST), await call(https, AWS_HOST)]) {
      expect(result.headers?.['Strict-Transport-Security']).toBe('max-age=31536000; includeSubDomains');
    }
  });

  it('sends no HSTS on loopback', async () => {
    const result = await call({ Host: '127.0.0.1:3000', Authorization: 'Bearer svss_session' });
    expect(result.headers?.['Strict-Transport-Security']).toBeUndefined();
  });

  it('decides from the configured public base URL when there is one', () => {
    expect(servedOnLoopback('http://127.0.0.1:3000', 'https://api.example.com')).toBe(false);
    expect(servedOnLoopback('https://api.example.com', 'http://localhost:3000')).toBe(true);
    expect(servedOnLoopback('https://api.example.com', undefined)).toBe(false);
    expect(servedOnLoopback('http://[::1]:3000', undefined)).toBe(true);
  });
});

describe('__Host- cookies outside loopback (issue 7 item 5)', () => {
  it('names the session cookie __Host-sv_session, Secure, Path=/, no Domain, on a public origin', () => {
    for (const cookie of [sessionCookie('svss_x', 'https://api.example.com'), clearedSessionCookie('https://api.example.com')]) {
      expect(cookie).toMatch(/^__Host-sv_session=/);
      expect(cookie).toContain('; Secure');
      expect(cookie).toContain('Path=/;');
      expect(cookie).not.toMatch(/Domain=/i);
    }
  });

  it('names the login-CSRF cookie __Host-sv_login_csrf, Secure, on a public origin', () => {
    const { cookie } = newLoginCsrf('https://api.example.com');
    expect(cookie).toMatch(/^__Host-sv_login_csrf=/);
    expect(cookie).toContain('; Secure');
    expect(cookie).not.toMatch(/Domain=/i);
  });

  it('keeps sv_session and sv_login_csrf without Secure on loopback', () => {
    expect(sessionCookie('svss_x', 'http://127.0.0.1:3000')).toMatch(/^sv_session=svss_x;/);
    expect(sessionCookie('svss_x', 'http://127.0.0.1:3000')).not.toContain('Secure');
    expect(newLoginCsrf('http://localhost:3000').cookie).toMatch(/^sv_login_csrf=/);
  });

  it('reads the session from __Host-sv_session on a public host and ignores a plain sv_session there', async () => {
    const https = { 'X-Forwarded-Proto': 'https' };
    expect((await call({ ...https, Cookie: '__Host-sv_session=svss_session' }, AWS_HOST)).statusCode).toBe(200);
    expect((await call({ ...https, Cookie: 'sv_session=svss_session' }, AWS_HOST)).statusCode).toBe(401);
  });
});
