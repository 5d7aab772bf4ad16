import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { asSession, call, errorEnvelope, personalAccessToken, signedInUser, type SignedInUser } from '../support/api-client.js';
import { useStack } from '../support/local-stack.js';
import { wholeTableAsText } from '../support/table-scan.js';

const stack = useStack();
let admin: SignedInUser;
let user: SignedInUser;
/** Every credential and password handed out in this file, for the final plaintext scan. */
const issuedSecrets: string[] = [];

beforeAll(async () => {
  admin = await signedInUser(stack.baseUrl, 'admin');
  user = await signedInUser(stack.baseUrl, 'user');
  issuedSecrets.push(admin.sessionToken, admin.password, user.sessionToken, user.password, user.csrfToken);
});

describe('POST /api/v1/sessions', () => {
  it('signs in and sets an HttpOnly, SameSite=Lax session cookie (not Secure on loopback)', async () => {
    const response = await call(stack.baseUrl, 'POST', '/api/v1/sessions', { body: { email: user.email, password: user.password } });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({
      token: expect.stringMatching(/^svss_[\w-]{43}$/),
      csrf_token: expect.any(String),
      expires_at: expect.any(String),
      user: {
        id: user.userId,
        email: user.email,
        role: 'user',
        created_at: expect.any(String),
        status: 'active',
        must_change_password: false,
      },
    });
    issuedSecrets.push(response.body.data.token);
    const hoursLeft = (Date.parse(response.body.data.expires_at) - Date.now()) / 3_600_000;
    expect(hoursLeft).toBeGreaterThan(11.9);
    expect(hoursLeft).toBeLessThanOrEqual(12);
    const cookie = response.headers.get('set-cookie')!;
    expect(cookie).toContain(`sv_session=${response.body.data.token}`);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Path=\//);
    expect(cookie).not.toMatch(/Secure/);
  });

  it('treats the email case-insensitively', async () => {
    const response = await call(stack.baseUrl, 'POST', '/api/v1/sessions', {
      body: { email: user.email.toUpperCase(), password: user.password },
    });
    expect(response.status).toBe(200);
  });

  it('answers a wrong password and an unknown email alike: 401 with the same message', async () => {
    const wrongPassword = await call(stack.baseUrl, 'POST', '/api/v1/sessions', { body: { email: admin.email, password: 'nope' } });
    const unknownEmail = await call(stack.baseUrl, 'POST', '/api/v1/sessions', {
      body: { email: `ghost-${randomUUID()}@example.com`, password: 'nope' },
    });
    expect(wrongPassword.status).toBe(401);
    expect(wrongPassword.body).toEqual(errorEnvelope('UNAUTHORIZED'));
    expect(unknownEmail.body).toEqual(wrongPassword.body);
  });

  it.each([
    ['a missing password', { email: 'a@example.com' }],
    ['an unknown field', { email: 'a@example.com', password: 'x', remember: true }],
    ['a number for the email', { email: 42, password: 'x' }],
  ])('answers 400 BAD_REQUEST for %s', async (_case, body) => {
    const response = await call(stack.baseUrl, 'POST', '/api/v1/sessions', { body });
    expect(response.status).toBe(400);
    expect(response.body).toEqual(errorEnvelope('BAD_REQUEST'));
  });

  it('answers 400 for a body that is not JSON', async () => {
    const response = await call(stack.baseUrl, 'POST', '/api/v1/sessions', {
      rawBody: '{"email":',
      headers: { 'content-type': 'application/json' },
    });
    expect(response).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });
  });

  it('locks an email for 15 minutes after five failures, even for the right password', async () => {
    const victim = await signedInUser(stack.baseUrl);
    for (let attempt = 1; attempt <= 5; attempt += 1) {
      const response = await call(stack.baseUrl, 'POST', '/api/v1/sessions', { body: { email: victim.email, password: 'wrong' } });
      expect(response.status).toBe(401);
    }
    const locked = await call(stack.baseUrl, 'POST', '/api/v1/sessions', { body: { email: victim.email, password: victim.password } });
    expect(locked.status).toBe(429);
    expect(locked.body).toEqual(errorEnvelope('RATE_LIMITED'));
    const retryAfter = Number(locked.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(14 * 60);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    const otherEmail = await call(stack.baseUrl, 'POST', '/api/v1/sessions', { body: { email: user.email, password: user.password } });
    expect(otherEmail.status).toBe(200);
  });
  it('checks at most five passwords for an email even when twenty guesses arrive at once', async () => {
    const victim = await signedInUser(stack.baseUrl);
    const guesses = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        call(stack.baseUrl, 'POST', '/api/v1/sessions', { body: { email: victim.email, password: `guess-${index}` } }),
      ),
    );
    const statuses = guesses.map((response) => response.status).sort();
    expect(statuses).toEqual([...Array(5).fill(401), ...Array(15).fill(429)]);
    const afterwards = await call(stack.baseUrl, 'POST', '/api/v1/sessions', { body: { email: victim.email, password: victim.password } });
    expect(afterwards).toMatchObject({ status: 429, body: errorEnvelope('RATE_LIMITED') });
  });

  it('forgets earlier failures once the right password is given', async () => {
    const forgetful = await signedInUser(stack.baseUrl);
    for (let attempt = 1; attempt <= 4; attempt += 1) {
      await call(stack.baseUrl, 'POST', '/api/v1/sessions', { body: { email: forgetful.email, password: 'wrong' } });
    }
    const right = await call(stack.baseUrl, 'POST', '/api/v1/sessions', { body: { email: forgetful.email, password: forgetful.password } });
    expect(right.status).toBe(200);
    for (let attempt = 1; attempt <= 4; attempt += 1) {
      const wrong = await call(stack.baseUrl, 'POST', '/api/v1/sessions', { body: { email: forgetful.email, password: 'wrong' } });
      expect(wrong.status).toBe(401);
    }
  });
});

describe('the current session', () => {
  it('is readable with the cookie, with its CSRF token', async () => {
    const response = await call(stack.baseUrl, 'GET', '/api/v1/sessions/current', { headers: { cookie: user.cookie } });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({
      user: expect.objectContaining({ id: user.userId, email: user.email }),
      csrf_token: user.csrfToken,
      expires_at: expect.any(String),
    });
  });

  it('answers 401 without a credential and 403 FORBIDDEN to a personal access token', async () => {
    expect((await call(stack.baseUrl, 'GET', '/api/v1/sessions/current')).body).toEqual(errorEnvelope('UNAUTHORIZED'));
    const pat = await personalAccessToken(stack.baseUrl, user);
    issuedSecrets.push(pat);
    const response = await call(stack.baseUrl, 'GET', '/api/v1/sessions/current', { token: pat });
    expect(response).toMatchObject({ status: 403, body: errorEnvelope('FORBIDDEN') });
  });

  it('signs out only with the CSRF token, clears the cookie, and the session stops working', async () => {
    const leaving = await signedInUser(stack.baseUrl);
    const refused = await call(stack.baseUrl, 'DELETE', '/api/v1/sessions/current', { headers: { cookie: leaving.cookie } });
    expect(refused).toMatchObject({ status: 403, body: errorEnvelope('CSRF_REJECTED') });

    const response = await call(stack.baseUrl, 'DELETE', '/api/v1/sessions/current', {
      headers: { cookie: leaving.cookie, 'x-csrf-token': leaving.csrfToken },
    });
    expect(response).toMatchObject({ status: 200, body: { data: 'deleted' } });
    expect(response.headers.get('set-cookie')).toMatch(/sv_session=;.*Max-Age=0/);
    const after = await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: leaving.sessionToken });
    expect(after.status).toBe(401);
  });
});

describe('personal access tokens', () => {
  it('are shown once at creation, then listed newest first without the token', async () => {
    const owner = await signedInUser(stack.baseUrl);
    const first = await call(stack.baseUrl, 'POST', '/api/v1/tokens', { ...asSession(owner), body: { name: 'first' } });
    const second = await call(stack.baseUrl, 'POST', '/api/v1/tokens', {
      ...asSession(owner),
      body: { name: 'second', expires_in_days: 1 },
    });
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual({
      id: expect.any(String),
      name: 'first',
      token: expect.stringMatching(/^svpat_[\w-]{43}$/),
      created_at: expect.any(String),
      expires_at: expect.any(String),
      scopes: ['containers:read', 'containers:write', 'account'],
      parent_id: null,
    });
    issuedSecrets.push(first.body.data.token, second.body.data.token);
    const days = (Date.parse(first.body.data.expires_at) - Date.parse(first.body.data.created_at)) / 86_400_000;
    expect(days).toBe(90);

    const list = await call(stack.baseUrl, 'GET', '/api/v1/tokens', { token: owner.sessionToken });
    expect(list.status).toBe(200);
    expect(list.body.data.map((token: { name: string }) => token.name)).toEqual(['second', 'first']);
    expect(list.text).not.toContain('svpat_');
    expect(list.body.data[0]).toEqual({
      id: second.body.data.id,
      name: 'second',
      created_at: expect.any(String),
      expires_at: expect.any(String),
      last_used_at: null,
      scopes: ['containers:read', 'containers:write', 'account'],
      parent_id: null,
    });
  });

  it('authenticate without CSRF, record their last use, and stop working once deleted', async () => {
    const owner = await signedInUser(stack.baseUrl);
    const pat = await personalAccessToken(stack.baseUrl, owner, 'cli');
    issuedSecrets.push(pat);
    const me = await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: pat });
    expect(me.body.data).toMatchObject({ id: owner.userId, email: owner.email, role: 'user' });

    const created = await call(stack.baseUrl, 'POST', '/api/v1/tokens', { token: pat, body: { name: 'made by a pat' } });
    expect(created.status).toBe(200);
    issuedSecrets.push(created.body.data.token);

    const list = await call(stack.baseUrl, 'GET', '/api/v1/tokens', { token: owner.sessionToken });
    const cli = list.body.data.find((token: { name: string }) => token.name === 'cli');
    expect(Date.parse(cli.last_used_at)).toBeGreaterThan(Date.now() - 60_000);

    const deleted = await call(stack.baseUrl, 'DELETE', `/api/v1/tokens/${cli.id}`, asSession(owner));
    expect(deleted).toMatchObject({ status: 200, body: { data: 'deleted' } });
    expect((await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: pat })).status).toBe(401);
    const again = await call(stack.baseUrl, 'DELETE', `/api/v1/tokens/${cli.id}`, asSession(owner));
    expect(again).toMatchObject({ status: 404, body: errorEnvelope('NOT_FOUND') });
  });

  it('leave the list once expired, although the table may still hold them', async () => {
    const owner = await signedInUser(stack.baseUrl);
    await personalAccessToken(stack.baseUrl, owner, 'short-lived');
    await personalAccessToken(stack.baseUrl, owner, 'long-lived');
    const [longLived, shortLived] = (await call(stack.baseUrl, 'GET', '/api/v1/tokens', { token: owner.sessionToken })).body.data;
    const { documentClient, tableName } = await import('../../lib/store/dynamo.js');
    const { keys } = await import('../../lib/store/keys.js');
    await documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.personalAccessToken(owner.userId, shortLived.id),
        UpdateExpression: 'SET expires_at = :past',
        ExpressionAttributeValues: { ':past': new Date(Date.now() - 1000).toISOString() },
      }),
    );
    const list = await call(stack.baseUrl, 'GET', '/api/v1/tokens', { token: owner.sessionToken });
    expect(list.body.data.map((token: { id: string }) => token.id)).toEqual([longLived.id]);
  });

  it("answers 404 for another user's token and for an id that is not a UUID", async () => {
    const owner = await signedInUser(stack.baseUrl);
    await personalAccessToken(stack.baseUrl, owner, 'mine');
    const [mine] = (await call(stack.baseUrl, 'GET', '/api/v1/tokens', { token: owner.sessionToken })).body.data;
    const foreign = await call(stack.baseUrl, 'DELETE', `/api/v1/tokens/${mine.id}`, asSession(user));
    expect(foreign).toMatchObject({ status: 404, body: errorEnvelope('NOT_FOUND') });
    const malformed = await call(stack.baseUrl, 'DELETE', '/api/v1/tokens/not-a-uuid', asSession(user));
    expect(malformed).toMatchObject({ status: 404, body: errorEnvelope('NOT_FOUND') });
    expect((await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: owner.sessionToken })).status).toBe(200);
  });

  it.each([0, 366, 1.5, '30'])('refuses expires_in_days %s with 400', async (days) => {
    const response = await call(stack.baseUrl, 'POST', '/api/v1/tokens', {
      ...asSession(user),
      body: { name: 'x', expires_in_days: days },
    });
    expect(response).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });
  });

  it('refuses a session POST without x-csrf-token with 403 CSRF_REJECTED', async () => {
    const response = await call(stack.baseUrl, 'POST', '/api/v1/tokens', { ...asSession(user, false), body: { name: 'x' } });
    expect(response).toMatchObject({ status: 403, body: errorEnvelope('CSRF_REJECTED') });
  });
});

describe('users', () => {
  it('are created by an admin, and the new user can sign in', async () => {
    const email = `new-${randomUUID()}@example.com`;
    const password = 'a long enough password';
    issuedSecrets.push(password);
    const response = await call(stack.baseUrl, 'POST', '/api/v1/users', { ...asSession(admin), body: { email, password } });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({
      id: expect.any(String),
      email,
      role: 'user',
      created_at: expect.any(String),
      status: 'active',
      must_change_password: false,
    });
    const signIn = await call(stack.baseUrl, 'POST', '/api/v1/sessions', { body: { email, password } });
    expect(signIn.status).toBe(200);
    issuedSecrets.push(signIn.body.data.token);
  });

  it('answers 409 CONFLICT for an email that is taken, whatever its case', async () => {
    const response = await call(stack.baseUrl, 'POST', '/api/v1/users', {
      ...asSession(admin),
      body: { email: user.email.toUpperCase(), password: 'another long password' },
    });
    expect(response).toMatchObject({ status: 409, body: errorEnvelope('CONFLICT') });
  });

  it('lets exactly one of ten concurrent creates of one email win', async () => {
    const email = `race-${randomUUID()}@example.com`;
    const responses = await Promise.all(
      Array.from({ length: 10 }, () =>
        call(stack.baseUrl, 'POST', '/api/v1/users', { ...asSession(admin), body: { email, password: 'racing password 1' } }),
      ),
    );
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([200, ...Array(9).fill(409)]);
  });

  it.each([
    ['a short password', { email: 'short@example.com', password: 'short' }],
    ['an invalid email', { email: 'not-an-email', password: 'long enough password' }],
    ['an unknown role', { email: 'r@example.com', password: 'long enough password', role: 'root' }],
  ])('answers 400 for %s', async (_case, body) => {
    const response = await call(stack.baseUrl, 'POST', '/api/v1/users', { ...asSession(admin), body });
    expect(response).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });
  });

  it('are not for regular users: 403 FORBIDDEN on create and list', async () => {
    const create = await call(stack.baseUrl, 'POST', '/api/v1/users', {
      ...asSession(user),
      body: { email: 'x@example.com', password: 'long enough password' },
    });
    expect(create).toMatchObject({ status: 403, body: errorEnvelope('FORBIDDEN') });
    const list = await call(stack.baseUrl, 'GET', '/api/v1/users', { token: user.sessionToken });
    expect(list).toMatchObject({ status: 403, body: errorEnvelope('FORBIDDEN') });
  });

  it('are listed newest first in pages linked by a Link header', async () => {
    const firstPage = await call(stack.baseUrl, 'GET', '/api/v1/users?limit=2', { token: admin.sessionToken });
    expect(firstPage.status).toBe(200);
    expect(firstPage.body.data).toHaveLength(2);
    const link = firstPage.headers.get('link')!;
    expect(link).toMatch(/^<http:\/\/127\.0\.0\.1:\d+\/api\/v1\/users\?limit=2&cursor=[\w-]+>; rel="next"$/);
    const nextUrl = new URL(link.slice(1, link.indexOf('>')));
    const secondPage = await call(stack.baseUrl, 'GET', `${nextUrl.pathname}${nextUrl.search}`, { token: admin.sessionToken });
    expect(secondPage.status).toBe(200);
    const firstIds = firstPage.body.data.map((entry: { id: string }) => entry.id);
    const secondIds = secondPage.body.data.map((entry: { id: string }) => entry.id);
    expect(secondIds.some((id: string) => firstIds.includes(id))).toBe(false);
    const all = await call(stack.baseUrl, 'GET', '/api/v1/users?limit=1000', { token: admin.sessionToken });
    const allIds = all.body.data.map((entry: { id: string }) => entry.id);
    expect(allIds).toEqual([...allIds].sort().reverse());
    expect(allIds.slice(0, 4)).toEqual([...firstIds, ...secondIds]);
  });

  it.each(['limit=0', 'limit=1001', 'limit=abc', 'cursor=bm9wZQ', 'unknown=1'])('answers 400 for the query %s', async (query) => {
    const response = await call(stack.baseUrl, 'GET', `/api/v1/users?${query}`, { token: admin.sessionToken });
    expect(response).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });
  });

  it('refuses a cursor forged to read another partition', async () => {
    const forged = Buffer.from(JSON.stringify({ pk: 'USER#x', sk: 'PROFILE', gsi2pk: 'CONTAINERS', gsi2sk: 'USER#x' })).toString(
      'base64url',
    );
    const response = await call(stack.baseUrl, 'GET', `/api/v1/users?cursor=${forged}`, { token: admin.sessionToken });
    expect(response).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });
  });
});

describe('the table', () => {
  it('holds no credential or password in plain text', async () => {
    const { itemCount, text: dump } = await wholeTableAsText();
    expect(itemCount).toBeGreaterThan(10);
    expect(issuedSecrets.length).toBeGreaterThan(10);
    for (const secret of issuedSecrets) expect(dump).not.toContain(secret);
    expect(dump).not.toMatch(/svss_|svpat_/);
  });
});
