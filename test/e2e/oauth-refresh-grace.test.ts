import { beforeAll, describe, expect, it, vi } from 'vitest';
import { call, errorEnvelope, signedInUser, type SignedInUser } from '../support/api-client.js';
import { useStack } from '../support/local-stack.js';
import { formBody, issuedTokens, registerApp, tokenRequest, type RegisteredApp } from '../support/oauth-flow.js';

/**
 * A deployment that opts into the refresh retry grace (docs/oauth.md, "Refresh retries"): the
 * service's default is 0 (product.md section 9), so this file turns it on before the stack's
 * configuration is read. 3 s: a retry past it is waited out (it was 10 s, waited 11 s), and 20
 * concurrent refreshes on a busy machine still land well within it.
 */
const GRACE_S = vi.hoisted(() => {
  process.env.REFRESH_REUSE_GRACE_SECONDS = '3';
  return 3;
});

const REDIRECT_URI = 'http://127.0.0.1:8765/callback';

const stack = useStack();
let owner: SignedInUser;
let person: SignedInUser;
let app: RegisteredApp;
const issuedSecrets: string[] = [];

const tokensOf = async (forApp: RegisteredApp) => issuedTokens(stack.baseUrl, person, forApp);

beforeAll(async () => {
  owner = await signedInUser(stack.baseUrl);
  person = await signedInUser(stack.baseUrl);
  app = await registerApp(stack.baseUrl, owner, { name: 'Dashboard', redirect_uris: [REDIRECT_URI] });
});

describe(`POST /api/v1/oauth/token with REFRESH_REUSE_GRACE_SECONDS=${GRACE_S}`, () => {
  it('answers 20 concurrent refreshes of one token 200 with one and the same pair, which works', async () => {
    const tokens = await tokensOf(app);

    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        call(stack.baseUrl, 'POST', '/api/v1/oauth/token', {
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          rawBody: formBody({
            grant_type: 'refresh_token',
            refresh_token: tokens.refresh_token,
            client_id: app.client_id,
            client_secret: app.client_secret,
          }),
        }),
      ),
    );

    expect(responses.map((response) => response.status)).toEqual(Array(20).fill(200));
    const pairs = new Set(responses.map((response) => `${response.body.access_token} ${response.body.refresh_token}`));
    expect(pairs.size).toBe(1);
    const [pair] = responses.map((response) => response.body);
    issuedSecrets.push(pair.access_token, pair.refresh_token);
    expect(pair).toMatchObject({ token_type: 'Bearer', scope: 'containers:read containers:write' });
    expect((await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: pair.access_token })).status).toBe(200);
    const onward = await tokenRequest(stack.baseUrl, app, { grant_type: 'refresh_token', refresh_token: pair.refresh_token });
    expect(onward.status).toBe(200);
    issuedSecrets.push(onward.body.access_token, onward.body.refresh_token);
  });

  it('takes a retry past the grace after the rotation as a replay: 400, and the grant is revoked', { timeout: 30_000 }, async () => {
    const tokens = await tokensOf(app);
    const rotated = await tokenRequest(stack.baseUrl, app, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    issuedSecrets.push(rotated.body.access_token, rotated.body.refresh_token);
    const retry = await tokenRequest(stack.baseUrl, app, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    expect(retry.body).toMatchObject({ access_token: rotated.body.access_token, refresh_token: rotated.body.refresh_token });

    await new Promise((resolve) => setTimeout(resolve, (GRACE_S + 1) * 1000));

    const late = await tokenRequest(stack.baseUrl, app, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    expect(late).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });
    expect((await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: rotated.body.access_token })).status).toBe(401);
  });
});
