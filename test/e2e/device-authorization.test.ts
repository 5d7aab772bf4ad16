import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../lib/identity/secrets.js';
import { DEVICE_CODE_GRANT_TYPE } from '../../lib/oauth/device-authorization.js';
import { FIRST_PARTY_CLI_CLIENT_ID } from '../../lib/oauth/first-party-client.js';
import { RESERVED_NAME_MESSAGE } from '../../lib/oauth/reserved-names.js';
import { documentClient, tableName } from '../../lib/store/dynamo.js';
import { keys } from '../../lib/store/keys.js';
import { type ApiResponse, call, signedInUser, type SignedInUser } from '../support/api-client.js';
import { useStack } from '../support/local-stack.js';
import { authorizePath, formBody, registerApp, type RegisteredApp } from '../support/oauth-flow.js';
import { wholeTableAsText } from '../support/table-scan.js';

const stack = useStack();
let developer: SignedInUser;
let person: SignedInUser;
let confidential: RegisteredApp;
let publicApp: RegisteredApp;

beforeAll(async () => {
  developer = await signedInUser(stack.baseUrl);
  person = await signedInUser(stack.baseUrl);
  confidential = await registerApp(stack.baseUrl, developer, {
    name: 'TV app',
    description: 'Shows your containers',
    redirect_uris: ['https://tv.example/cb'],
  });
  publicApp = await registerApp(stack.baseUrl, developer, {
    name: 'Terminal',
    redirect_uris: ['http://127.0.0.1:8765/callback'],
    token_endpoint_auth_method: 'none',
  });
});

const form = (path: string, fields: Record<string, string>): Promise<ApiResponse> =>
  call(stack.baseUrl, 'POST', path, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, rawBody: formBody(fields) });

interface DeviceStart {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

async function startDevice(clientId: string, extra: Record<string, string> = {}): Promise<DeviceStart> {
  const response = await form('/api/v1/oauth/device_authorization', { client_id: clientId, ...extra });
  if (response.status !== 200) throw new Error(`device authorization failed: ${response.status} ${response.text}`);
  return response.body;
}

const poll = (clientId: string, deviceCode: string, extra: Record<string, string> = {}) =>
  form('/api/v1/oauth/token', { grant_type: DEVICE_CODE_GRANT_TYPE, device_code: deviceCode, client_id: clientId, ...extra });

/** Pretends the device's last poll was long enough ago, instead of waiting the interval out. */
async function pollIntervalPassed(deviceCode: string): Promise<void> {
  await documentClient.send(
    new UpdateCommand({
      TableName: tableName,
      Key: keys.deviceAuthorization(sha256Hex(deviceCode)),
      UpdateExpression: 'REMOVE last_polled_at',
    }),
  );
}

/** Posts the device page's form as the signed-in person, as the page's Approve or Deny button does. */
const decideOnPage = (who: SignedInUser, userCode: string, decision: 'approve' | 'deny') =>
  call(stack.baseUrl, 'POST', '/device', {
    headers: { cookie: who.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    rawBody: formBody({ csrf_token: who.csrfToken, user_code: userCode, decision }),
  });

describe('public clients', () => {
  it('registers without a secret and lists none among the token endpoint auth methods', async () => {
    expect(publicApp.client_secret).toBeNull();
    expect(publicApp).toMatchObject({ token_endpoint_auth_method: 'none' });
    expect(confidential).toMatchObject({
      token_endpoint_auth_method: 'client_secret_basic',
      client_secret: expect.stringMatching(/^svcs_/),
    });
    const metadata = await call(stack.baseUrl, 'GET', '/.well-known/oauth-authorization-server');
    expect(metadata.body.token_endpoint_auth_methods_supported).toContain('none');
    expect(metadata.body.device_authorization_endpoint).toBe(`${stack.baseUrl}/api/v1/oauth/device_authorization`);
    expect(metadata.body.grant_types_supported).toContain(DEVICE_CODE_GRANT_TYPE);
  });

  it('refuses a public client an authorization request without PKCE', async () => {
    const response = await call(
      stack.baseUrl,
      'GET',
      authorizePath({ response_type: 'code', client_id: publicApp.client_id, redirect_uri: publicApp.redirect_uris[0]!, state: 's' }),
    );
    expect(response.status).toBe(400);
    expect(response.body.error.message).toMatch(/code_challenge/);
  });

  it('cannot rotate a secret it does not have (409)', async () => {
    const response = await call(stack.baseUrl, 'POST', `/api/v1/oauth/apps/${publicApp.id}/secret`, {
      token: developer.sessionToken,
      headers: { 'x-csrf-token': developer.csrfToken },
    });
    expect(response.status).toBe(409);
    expect(response.body.error.code).toBe('CONFLICT');
  });

  it('refuses a confidential client that sends only its client_id, and a secret sent for a public client', async () => {
    const bare = await form('/api/v1/oauth/device_authorization', { client_id: confidential.client_id });
    const withSecret = await form('/api/v1/oauth/device_authorization', { client_id: publicApp.client_id, client_secret: 'svcs_made_up' });
    expect(bare.status).toBe(401);
    expect(bare.body.error).toBe('invalid_client');
    expect(withSecret.status).toBe(401);
  });
});

describe('the device authorization grant over HTTP', () => {
  it('answers RFC 8628 section 3.2 with a user code of 8 consonants shown as XXXX-XXXX', async () => {
    const started = await startDevice(publicApp.client_id, { scope: 'containers:read' });
    expect(started).toEqual({
      device_code: expect.stringMatching(/^svdc_[A-Za-z0-9_-]{43}$/),
      user_code: expect.stringMatching(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/),
      verification_uri: `${stack.baseUrl}/device`,
      verification_uri_complete: `${stack.baseUrl}/device?user_code=${started.user_code}`,
      expires_in: 600,
      interval: 5,
    });
  });

  it('is pending, then slow_down when polled too fast (5 s more), then tokens once after approval', async () => {
    const started = await startDevice(publicApp.client_id);

    const pending = await poll(publicApp.client_id, started.device_code);
    const tooFast = await poll(publicApp.client_id, started.device_code);
    expect(pending.status).toBe(400);
    expect(pending.body.error).toBe('authorization_pending');
    expect(tooFast.status).toBe(400);
    expect(tooFast.body.error).toBe('slow_down');
    expect(tooFast.body.error_description).toMatch(/10 seconds/);

    // Typed as a person might: lower case, without the dash.
    const typed = started.user_code.replace('-', '').toLowerCase();
    const page = await call(stack.baseUrl, 'GET', `/device?user_code=${typed}`, { headers: { cookie: person.cookie } });
    expect(page.status).toBe(200);
    expect(page.text).toContain('Terminal');
    expect(page.text).toContain(started.user_code);
    const decided = await decideOnPage(person, typed, 'approve');
    expect(decided.status).toBe(303);
    expect(decided.headers.get('location')).toBe('/device?done=approved');

    await pollIntervalPassed(started.device_code);
    const tokens = await poll(publicApp.client_id, started.device_code);
    expect(tokens.status).toBe(200);
    expect(tokens.body).toMatchObject({
      token_type: 'Bearer',
      access_token: expect.stringMatching(/^svat_/),
      refresh_token: expect.stringMatching(/^svrt_/),
    });
    const me = await call(stack.baseUrl, 'GET', '/api/v1/containers', { token: tokens.body.access_token });
    expect(me.status).toBe(200);

    const again = await poll(publicApp.client_id, started.device_code);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');

    // A public client refreshes and revokes by its client_id alone.
    const refreshed = await form('/api/v1/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token,
      client_id: publicApp.client_id,
    });
    expect(refreshed.status).toBe(200);
    const revoked = await form('/api/v1/oauth/token/revoke', { token: refreshed.body.refresh_token, client_id: publicApp.client_id });
    expect(revoked.status).toBe(200);
    const afterRevocation = await call(stack.baseUrl, 'GET', '/api/v1/containers', { token: refreshed.body.access_token });
    expect(afterRevocation.status).toBe(401);
  });

  it('answers access_denied after the person denies, and the code cannot be approved afterwards', async () => {
    const started = await startDevice(confidential.client_id, { client_secret: confidential.client_secret });
    expect((await decideOnPage(person, started.user_code, 'deny')).headers.get('location')).toBe('/device?done=denied');

    const denied = await poll(confidential.client_id, started.device_code, { client_secret: confidential.client_secret });
    const approveLater = await decideOnPage(person, started.user_code, 'approve');

    expect(denied.status).toBe(400);
    expect(denied.body.error).toBe('access_denied');
    expect(approveLater.status).toBe(400);
  });

  it('answers expired_token once expires_in has passed', async () => {
    const started = await startDevice(publicApp.client_id);
    await documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.deviceAuthorization(sha256Hex(started.device_code)),
        UpdateExpression: 'SET expires_at = :past',
        ExpressionAttributeValues: { ':past': new Date(Date.now() - 1000).toISOString() },
      }),
    );
    const expired = await poll(publicApp.client_id, started.device_code);
    expect(expired.status).toBe(400);
    expect(expired.body.error).toBe('expired_token');
  });

  it('refuses an unknown device code, another client’s, and a request without one', async () => {
    const started = await startDevice(publicApp.client_id);
    const unknown = await poll(publicApp.client_id, 'svdc_made_up');
    const otherClient = await poll(confidential.client_id, started.device_code, { client_secret: confidential.client_secret });
    const missing = await form('/api/v1/oauth/token', { grant_type: DEVICE_CODE_GRANT_TYPE, client_id: publicApp.client_id });
    expect([unknown.body.error, otherClient.body.error, missing.body.error]).toEqual(['invalid_grant', 'invalid_grant', 'invalid_request']);
  });

  it('stores neither the device code nor the user code, only their hashes', async () => {
    const started = await startDevice(publicApp.client_id);
    const { text } = await wholeTableAsText();
    expect(text).not.toContain(started.device_code);
    expect(text).not.toContain(started.user_code.replace('-', ''));
    expect(text).toContain(sha256Hex(started.device_code));
  });

  it('says a wrong code is wrong without telling whether it existed, and stops a session after 5 in a minute', async () => {
    const guesser = await signedInUser(stack.baseUrl);
    const started = await startDevice(publicApp.client_id);
    await decideOnPage(person, started.user_code, 'deny');
    // An answered code and a made-up one read the same.
    const answered = await call(stack.baseUrl, 'GET', `/device?user_code=${started.user_code}`, { headers: { cookie: guesser.cookie } });
    const madeUp = await call(stack.baseUrl, 'GET', '/device?user_code=BBBB-BBBB', { headers: { cookie: guesser.cookie } });
    expect(answered.status).toBe(400);
    expect(madeUp.status).toBe(400);
    const message = (response: ApiResponse) => /id="device-error">([^<]*)</.exec(response.text)?.[1];
    expect(message(answered)).toBe(message(madeUp));

    for (const guess of ['CCCC-CCCC', 'DDDD-DDDD', 'FFFF-FFFF']) {
      expect((await call(stack.baseUrl, 'GET', `/device?user_code=${guess}`, { headers: { cookie: guesser.cookie } })).status).toBe(400);
    }
    const sixth = await call(stack.baseUrl, 'GET', '/device?user_code=GGGG-GGGG', { headers: { cookie: guesser.cookie } });
    expect(sixth.status).toBe(429);
    expect(sixth.headers.get('retry-after')).toMatch(/^\d+$/);
    // While limited, a right code is refused alike (so the answer tells a guesser nothing); another account opens it.
    const fresh = await startDevice(publicApp.client_id);
    expect((await call(stack.baseUrl, 'GET', `/device?user_code=${fresh.user_code}`, { headers: { cookie: guesser.cookie } })).status).toBe(
      429,
    );
    expect((await call(stack.baseUrl, 'GET', `/device?user_code=${fresh.user_code}`, { headers: { cookie: person.cookie } })).status).toBe(
      200,
    );
  });

  it('limits wrong codes per account too: a second session of the same account gets 3 more, then 429', async () => {
    // Prepare: one account, two sessions.
    const guesser = await signedInUser(stack.baseUrl);
    const second = await call(stack.baseUrl, 'POST', '/api/v1/sessions', { body: { email: guesser.email, password: guesser.password } });
    const secondCookie = `sv_session=${second.body.data.token}`;
    const guess = (cookie: string, code: string) => call(stack.baseUrl, 'GET', `/device?user_code=${code}`, { headers: { cookie } });
    // Act: five wrong codes in the first session (its own limit), then more in the second.
    const first = [];
    for (const code of ['BBBB-CCCC', 'BBBB-DDDD', 'BBBB-FFFF', 'BBBB-GGGG', 'BBBB-HHHH'])
      first.push((await guess(guesser.cookie, code)).status);
    const then = [];
    for (const code of ['CCCC-BBBB', 'CCCC-DDDD', 'CCCC-FFFF', 'CCCC-GGGG']) then.push((await guess(secondCookie, code)).status);
    // Assess: the account's eighth wrong code is its last in the window, whatever the session.
    expect(first).toEqual([400, 400, 400, 400, 400]);
    expect(then).toEqual([400, 400, 400, 429]);
  });

  it('sends a signed-out browser through the sign-in page and back to the code', async () => {
    const response = await call(stack.baseUrl, 'GET', '/device?user_code=ABCD-EFGH');
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe(`/login?next=${encodeURIComponent('/device?user_code=ABCD-EFGH')}`);
  });

  it('refuses the decision without the CSRF token', async () => {
    const started = await startDevice(publicApp.client_id);
    const response = await call(stack.baseUrl, 'POST', '/device', {
      headers: { cookie: person.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: formBody({ user_code: started.user_code, decision: 'approve' }),
    });
    expect(response.status).toBe(403);
  });

  it('provisions the first-party CLI client on its first use, as a public client', async () => {
    const started = await startDevice(FIRST_PARTY_CLI_CLIENT_ID);
    const again = await startDevice(FIRST_PARTY_CLI_CLIENT_ID);
    expect(started.user_code).not.toBe(again.user_code);
    const page = await call(stack.baseUrl, 'GET', `/device?user_code=${started.user_code}`, { headers: { cookie: person.cookie } });
    expect(page.text).toContain('container-hosting CLI');
  });
});

describe('the device page against phishing (RFC 8628 section 5.4)', () => {
  const textOf = (html: string, id: string) =>
    new RegExp(`id="${id}"[^>]*>([\\s\\S]*?)</p>`)
      .exec(html)?.[1]
      ?.replace(/<[^>]+>/g, '')
      .replace(/\s+/g, ' ')
      .trim();

  it.each([
    'container-hosting CLI',
    'container hosting cli',
    'Container-Hosting CLI',
    'container‐hosting\u00a0CLI',
    'соntаinеr-hоsting CLI',
    'ｃｏｎｔａｉｎｅｒ－ｈｏｓｔｉｎｇ ＣＬＩ',
  ])('refuses another application the CLI’s name or one confusable with it: %j', async (name) => {
    const response = await call(stack.baseUrl, 'POST', '/api/v1/oauth/apps', {
      token: developer.sessionToken,
      headers: { 'x-csrf-token': developer.csrfToken },
      body: {
        name,
        description: "The service's own command-line client, signing in on this computer or a terminal you are using.",
        redirect_uris: ['http://127.0.0.1:8765/callback'],
        token_endpoint_auth_method: 'none',
      },
    });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('BAD_REQUEST');
    expect(response.body.error.message).toMatch(/^Invalid request body: name: /);
  });

  it.each([
    ['Coptic', 'ⲥⲟntainer-hⲟsting CLI'],
    ['Armenian', 'cօոtaіոer-hօsting CLI'],
  ])('refuses the %s look-alike of the CLI’s name on create and rename, naming the field in the envelope: %s', async (_, name) => {
    // Act
    const created = await call(stack.baseUrl, 'POST', '/api/v1/oauth/apps', {
      token: developer.sessionToken,
      headers: { 'x-csrf-token': developer.csrfToken },
      body: { name, redirect_uris: ['http://127.0.0.1:8765/callback'], token_endpoint_auth_method: 'none' },
    });
    const renamed = await call(stack.baseUrl, 'PATCH', `/api/v1/oauth/apps/${publicApp.id}`, {
      token: developer.sessionToken,
      headers: { 'x-csrf-token': developer.csrfToken },
      body: { name },
    });
    // Assess
    for (const response of [created, renamed]) {
      expect(response.status).toBe(400);
      expect(response.body.error).toEqual({
        code: 'BAD_REQUEST',
        message: `Invalid request body: name: ${RESERVED_NAME_MESSAGE}`,
        details: [{ field: 'name', message: RESERVED_NAME_MESSAGE }],
      });
    }
    const listed = await call(stack.baseUrl, 'GET', '/api/v1/oauth/apps', { token: developer.sessionToken });
    expect(JSON.stringify(listed.body)).not.toContain(name);
  });

  it('refuses renaming an application to the CLI’s name', async () => {
    const response = await call(stack.baseUrl, 'PATCH', `/api/v1/oauth/apps/${publicApp.id}`, {
      token: developer.sessionToken,
      headers: { 'x-csrf-token': developer.csrfToken },
      body: { name: 'Container Hosting CLI' },
    });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toMatch(/name: /);
  });

  it('shows who registered a third-party application and when, the scopes, and a warning', async () => {
    const started = await startDevice(publicApp.client_id, { scope: 'containers:read' });
    const page = await call(stack.baseUrl, 'GET', `/device?user_code=${started.user_code}`, { headers: { cookie: person.cookie } });
    expect(page.status).toBe(200);
    expect(textOf(page.text, 'app-registrant')).toBe(
      `Not made by this service: registered by ${developer.email} on ${publicApp.created_at.slice(0, 10)}.`,
    );
    expect(page.text).toMatch(/id="scopes">\s*<li><strong>containers:read<\/strong>/);
    expect(page.text).not.toContain('containers:write');
    expect(textOf(page.text, 'device-warning')).toMatch(/^Only enter a code shown on a device you are using right now\./);
  });

  it("quotes a third-party application's name apart from the service's wording, never in the heading or the title", async () => {
    const started = await startDevice(publicApp.client_id);
    const page = await call(stack.baseUrl, 'GET', `/device?user_code=${started.user_code}`, { headers: { cookie: person.cookie } });
    expect(page.text).toMatch(/<title>Connect an application not made by this service<\/title>/);
    expect(page.text).toMatch(/<h1>Connect an application not made by this service\?<\/h1>/);
    const named = /id="app-named">([\s\S]*?)<\/div>/.exec(page.text)?.[1];
    expect(named?.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ')).toBe('An application named “Terminal” (not made by this service)');
    expect(page.text).toContain('<span class="third-party-name">“<span id="app-name">Terminal</span>”</span>');
    expect(page.text.match(/Terminal/g)).toHaveLength(1);
  });

  it("says the first-party client is this service's own CLI", async () => {
    const started = await startDevice(FIRST_PARTY_CLI_CLIENT_ID);
    const page = await call(stack.baseUrl, 'GET', `/device?user_code=${started.user_code}`, { headers: { cookie: person.cookie } });
    expect(textOf(page.text, 'app-registrant')).toBe("This is this service's own CLI, the container-hosting command-line client.");
    expect(textOf(page.text, 'device-warning')).toMatch(/^Only enter a code/);
    expect(page.text).toContain('<h1>Connect <span id="app-name">container-hosting CLI</span>?</h1>');
    expect(page.text).not.toContain('id="app-named"');
  });
});
