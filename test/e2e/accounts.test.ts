import { beforeAll, describe, expect, it } from 'vitest';
import { asSession, call, errorEnvelope, personalAccessToken, signedInUser, type SignedInUser } from '../support/api-client.js';
import { useStack } from '../support/local-stack.js';
import { issuedTokens, registerApp } from '../support/oauth-flow.js';

const stack = useStack();
let admin: SignedInUser;

beforeAll(async () => {
  admin = await signedInUser(stack.baseUrl, 'admin');
});

const signIn = (email: string, password: string, newPassword?: string) =>
  call(stack.baseUrl, 'POST', '/api/v1/sessions', { body: { email, password, ...(newPassword ? { new_password: newPassword } : {}) } });

/** Whether a bearer credential still authenticates (GET /users/me takes every kind). */
const works = async (token: string): Promise<boolean> => {
  const response = await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token });
  if (response.status !== 200 && response.status !== 401) throw new Error(`unexpected ${response.status} ${response.text}`);
  return response.status === 200;
};

describe('POST /api/v1/users/me/password', () => {
  it('changes the password, keeps the session that changed it and signs out the others', async () => {
    // Prepare: one person, two sessions (two browsers).
    const person = await signedInUser(stack.baseUrl);
    const otherBrowser = (await signIn(person.email, person.password)).body.data.token as string;
    const newPassword = 'a new long password 37';
    // Act
    const response = await call(stack.baseUrl, 'POST', '/api/v1/users/me/password', {
      ...asSession(person),
      body: { current_password: person.password, new_password: newPassword },
    });
    // Assess
    expect(response.status).toBe(200);
    expect(await works(person.sessionToken)).toBe(true);
    expect(await works(otherBrowser)).toBe(false);
    expect((await signIn(person.email, person.password)).status).toBe(401);
    expect((await signIn(person.email, newPassword)).status).toBe(200);
  });

  it('refuses a wrong current password with the field named, and changes nothing', async () => {
    const person = await signedInUser(stack.baseUrl);
    const response = await call(stack.baseUrl, 'POST', '/api/v1/users/me/password', {
      ...asSession(person),
      body: { current_password: 'not the password', new_password: 'another long password' },
    });
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([{ field: 'current_password', message: 'is wrong' }]);
    expect((await signIn(person.email, person.password)).status).toBe(200);
  });

  it('refuses a new password under 12 characters', async () => {
    const person = await signedInUser(stack.baseUrl);
    const response = await call(stack.baseUrl, 'POST', '/api/v1/users/me/password', {
      ...asSession(person),
      body: { current_password: person.password, new_password: 'short' },
    });
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([{ field: 'new_password', message: 'must be at least 12 characters' }]);
  });

  it('takes only a session: a personal access token gets 403', async () => {
    const person = await signedInUser(stack.baseUrl);
    const token = await personalAccessToken(stack.baseUrl, person);
    const response = await call(stack.baseUrl, 'POST', '/api/v1/users/me/password', {
      token,
      body: { current_password: person.password, new_password: 'a new long password 37' },
    });
    expect(response.status).toBe(403);
    expect((await signIn(person.email, person.password)).status).toBe(200);
  });
});

describe("POST /api/v1/users/{user_id}/password-reset (an admin's reset)", () => {
  it('gives a one-time password, ends the sessions, and the next sign-in must choose a new password', async () => {
    // Prepare
    const person = await signedInUser(stack.baseUrl);
    // Act
    const reset = await call(stack.baseUrl, 'POST', `/api/v1/users/${person.userId}/password-reset`, asSession(admin));
    // Assess
    expect(reset.status).toBe(200);
    expect(reset.body.data.user).toMatchObject({ id: person.userId, must_change_password: true, status: 'active' });
    const temporary = reset.body.data.temporary_password as string;
    expect(temporary.length).toBeGreaterThanOrEqual(12);
    expect(await works(person.sessionToken)).toBe(false);
    expect((await signIn(person.email, person.password)).status).toBe(401);

    const withoutNew = await signIn(person.email, temporary);
    expect(withoutNew.status).toBe(403);
    expect(withoutNew.body).toEqual(errorEnvelope('PASSWORD_CHANGE_REQUIRED'));
    const sameAgain = await signIn(person.email, temporary, temporary);
    expect(sameAgain.status).toBe(400);

    const chosen = 'chosen after the reset 37';
    const withNew = await signIn(person.email, temporary, chosen);
    expect(withNew.status).toBe(200);
    expect(withNew.body.data.user.must_change_password).toBe(false);
    expect((await signIn(person.email, temporary)).status).toBe(401);
    expect((await signIn(person.email, chosen)).status).toBe(200);
  });

  it('is for admins: an ordinary account gets 403, and an unknown user is 404', async () => {
    const person = await signedInUser(stack.baseUrl);
    const other = await signedInUser(stack.baseUrl);
    const byUser = await call(stack.baseUrl, 'POST', `/api/v1/users/${other.userId}/password-reset`, asSession(person));
    expect(byUser.status).toBe(403);
    expect(await works(other.sessionToken)).toBe(true);
    const unknown = await call(
      stack.baseUrl,
      'POST',
      '/api/v1/users/0190b7e0-0000-7000-8000-000000000000/password-reset',
      asSession(admin),
    );
    expect(unknown.status).toBe(404);
  });
});

describe('POST /api/v1/users/{user_id}/disable and /enable', () => {
  it("stops the account's session, personal access token and OAuth access token at once; enabling brings back the token only", async () => {
    // Prepare: a person with a session, a PAT and an OAuth application's tokens.
    const person = await signedInUser(stack.baseUrl);
    const pat = await personalAccessToken(stack.baseUrl, person);
    const developer = await signedInUser(stack.baseUrl);
    const app = await registerApp(stack.baseUrl, developer, { name: 'Disable Probe', redirect_uris: ['http://127.0.0.1:9/callback'] });
    const oauth = await issuedTokens(stack.baseUrl, person, app);
    expect(await works(oauth.access_token)).toBe(true);

    // Act
    const disabled = await call(stack.baseUrl, 'POST', `/api/v1/users/${person.userId}/disable`, asSession(admin));

    // Assess
    expect(disabled.status).toBe(200);
    expect(disabled.body.data).toMatchObject({ id: person.userId, status: 'disabled' });
    expect(await works(person.sessionToken)).toBe(false);
    expect(await works(pat)).toBe(false);
    expect(await works(oauth.access_token)).toBe(false);
    const signInDisabled = await signIn(person.email, person.password);
    expect(signInDisabled.status).toBe(403);
    expect(signInDisabled.body).toEqual(errorEnvelope('ACCOUNT_DISABLED'));
    // A wrong password learns nothing about the account.
    expect((await signIn(person.email, 'not the password')).status).toBe(401);
    const listed = await call(stack.baseUrl, 'GET', '/api/v1/users?limit=1000', asSession(admin));
    expect(listed.body.data.find((user: { id: string }) => user.id === person.userId)).toMatchObject({ status: 'disabled' });

    const enabled = await call(stack.baseUrl, 'POST', `/api/v1/users/${person.userId}/enable`, asSession(admin));
    expect(enabled.status).toBe(200);
    expect(enabled.body.data.status).toBe('active');
    expect(await works(pat)).toBe(true);
    expect(await works(person.sessionToken)).toBe(false);
    expect(await works(oauth.access_token)).toBe(false);
    expect((await signIn(person.email, person.password)).status).toBe(200);
  });

  it('refuses an admin disabling their own account (409), and an ordinary account (403)', async () => {
    const own = await call(stack.baseUrl, 'POST', `/api/v1/users/${admin.userId}/disable`, asSession(admin));
    expect(own.status).toBe(409);
    expect(await works(admin.sessionToken)).toBe(true);
    const person = await signedInUser(stack.baseUrl);
    const other = await signedInUser(stack.baseUrl);
    const byUser = await call(stack.baseUrl, 'POST', `/api/v1/users/${other.userId}/disable`, asSession(person));
    expect(byUser.status).toBe(403);
    expect(await works(other.sessionToken)).toBe(true);
  });

  it('leaves no working session from sign-ins racing the disable', async () => {
    // Prepare
    const person = await signedInUser(stack.baseUrl);
    // Act: sign-ins and the disable at once (four: the fifth attempt from one address would be refused).
    const [disabled, ...signIns] = await Promise.all([
      call(stack.baseUrl, 'POST', `/api/v1/users/${person.userId}/disable`, asSession(admin)),
      ...Array.from({ length: 4 }, () => signIn(person.email, person.password)),
    ]);
    // Assess: each sign-in either lost (403) or won before the disable, whose sweep ended its session.
    expect(disabled.status).toBe(200);
    for (const response of signIns) expect([200, 403]).toContain(response.status);
    const tokens = signIns.filter((response) => response.status === 200).map((response) => response.body.data.token as string);
    for (const token of [person.sessionToken, ...tokens]) expect(await works(token)).toBe(false);
  });
});
