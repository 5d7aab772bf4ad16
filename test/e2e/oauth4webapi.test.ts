import * as oauth from 'oauth4webapi';
import { beforeAll, describe, expect, it } from 'vitest';
import { signedInUser, type SignedInUser } from '../support/api-client.js';
import { useStack } from '../support/local-stack.js';
import { issuedTokens, registerApp, type RegisteredApp } from '../support/oauth-flow.js';

/**
 * A stock client library (oauth4webapi, which sends form-encoded requests) reads our errors as
 * the RFC 6749 errors they are (docs/oauth.md, "Error behaviour").
 */

const stack = useStack();
let person: SignedInUser;
let app: RegisteredApp;
let server: oauth.AuthorizationServer;
let client: oauth.Client;

/** Plain http is allowed only because the stack listens on loopback. */
const insecure = { [oauth.allowInsecureRequests]: true } as const;

beforeAll(async () => {
  const developer = await signedInUser(stack.baseUrl);
  person = await signedInUser(stack.baseUrl);
  app = await registerApp(stack.baseUrl, developer, { name: 'Library client', redirect_uris: ['http://127.0.0.1:8765/callback'] });
  const issuer = new URL(stack.baseUrl);
  server = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
  client = { client_id: app.client_id };
});

const refresh = async (authentication: oauth.ClientAuth, refreshToken: string) =>
  oauth.processRefreshTokenResponse(
    server,
    client,
    await oauth.refreshTokenGrantRequest(server, client, authentication, refreshToken, insecure),
  );

const failureOf = async (attempt: Promise<unknown>): Promise<unknown> => {
  try {
    await attempt;
  } catch (error) {
    return error;
  }
  throw new Error('expected the library to raise an error');
};

describe('oauth4webapi against the token endpoint', () => {
  it('rotates a refresh token, then surfaces invalid_grant when the rotated one is replayed', async () => {
    const tokens = await issuedTokens(stack.baseUrl, person, app);
    const successor = await refresh(oauth.ClientSecretPost(app.client_secret), tokens.refresh_token);
    // Using the successor ends the retry grace of the token it replaced (docs/oauth.md, "Refresh retries").
    const rotated = await refresh(oauth.ClientSecretPost(app.client_secret), successor.refresh_token!);
    expect(rotated.refresh_token).toMatch(/^svrt_/);

    const replay = await failureOf(refresh(oauth.ClientSecretPost(app.client_secret), tokens.refresh_token));

    expect(replay).toBeInstanceOf(oauth.ResponseBodyError);
    expect(replay).toMatchObject({ error: 'invalid_grant', status: 400 });
    // The replay revoked the grant: its newest refresh token fails the same way.
    expect(await failureOf(refresh(oauth.ClientSecretBasic(app.client_secret), rotated.refresh_token!))).toMatchObject({
      error: 'invalid_grant',
    });
  });

  it('surfaces invalid_client for a wrong secret sent in the body', async () => {
    const tokens = await issuedTokens(stack.baseUrl, person, app);

    const failure = await failureOf(refresh(oauth.ClientSecretPost('svcs_wrong'), tokens.refresh_token));

    expect(failure).toBeInstanceOf(oauth.ResponseBodyError);
    expect(failure).toMatchObject({ error: 'invalid_client', status: 401 });
  });

  it('surfaces the Basic challenge (401) for a wrong secret sent with HTTP Basic', async () => {
    const tokens = await issuedTokens(stack.baseUrl, person, app);

    const failure = await failureOf(refresh(oauth.ClientSecretBasic('svcs_wrong'), tokens.refresh_token));

    expect(failure).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    const challenge = failure as oauth.WWWAuthenticateChallengeError;
    expect(challenge.status).toBe(401);
    expect(challenge.cause).toEqual([
      expect.objectContaining({ scheme: 'basic', parameters: expect.objectContaining({ realm: 'oauth' }) }),
    ]);
    expect(await challenge.response.json()).toMatchObject({ error: 'invalid_client' });
    // The same token still works with the right secret: a failed authentication revokes nothing.
    expect((await refresh(oauth.ClientSecretBasic(app.client_secret), tokens.refresh_token)).access_token).toMatch(/^svat_/);
  });
});
