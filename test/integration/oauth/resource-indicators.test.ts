import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { OAuthRequestError } from '../../../lib/errors.js';
import { ALL_SCOPES, type Principal } from '../../../lib/identity/principal.js';
import { ApplicationService } from '../../../lib/oauth/applications.js';
import { AuthorizationService } from '../../../lib/oauth/authorization.js';
import type { ClientCredentials } from '../../../lib/oauth/client-authentication.js';
import { DeviceAuthorizationService } from '../../../lib/oauth/device-authorization.js';
import { parseAuthorizeParameters } from '../../../lib/oauth/oauth-parameters.js';
import { s256CodeChallenge } from '../../../lib/oauth/pkce.js';
import { NO_REFRESH_GRACE } from '../../../lib/oauth/refresh-grace.js';
import { TokenGrantService } from '../../../lib/oauth/token-grants.js';
import { cachedMiddlewareClient, documentClient } from '../../../lib/store/dynamo.js';
import { identityService } from '../../../lib/wiring/identity.js';
import {
  applicationStore,
  authorizationStore,
  deviceAuthorizationStore,
  deviceCodeGrantStore,
  tokenGrantStore,
} from '../../../lib/wiring/oauth.js';

const ISSUER = 'https://hosting.example';
const MCP = `${ISSUER}/mcp`;
const API = `${ISSUER}/api/v1`;
const REDIRECT_URI = 'http://127.0.0.1:9999/callback';
const VERIFIER = 'a'.repeat(43);

const apps = new ApplicationService(applicationStore);
const authorization = new AuthorizationService(authorizationStore);
const tokens = new TokenGrantService({ tokenGrants: tokenGrantStore, deviceCodes: deviceCodeGrantStore, grace: NO_REFRESH_GRACE });
const devices = new DeviceAuthorizationService(deviceAuthorizationStore);

let user: Principal;
let client: ClientCredentials;

beforeAll(async () => {
  const created = await identityService.createUser({ email: `agent-${randomUUID()}@example.com`, password: 'correct horse battery' });
  user = {
    userId: created.id,
    role: 'user',
    kind: 'session',
    scopes: ALL_SCOPES,
    credentialHash: 'not-used',
    expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
  };
  const { app } = await apps.registerApp(user, {
    name: 'Agent',
    description: '',
    redirectUris: [REDIRECT_URI],
    tokenEndpointAuthMethod: 'none',
  });
  client = { clientId: app.clientId, clientSecret: '', method: 'none' };
});

/** The authorize request as the authorize function parses it, approved by the user: the code. */
async function codeFor(resource?: string): Promise<string> {
  const query: Record<string, string> = {
    response_type: 'code',
    client_id: client.clientId,
    redirect_uri: REDIRECT_URI,
    state: 's',
    code_challenge: s256CodeChallenge(VERIFIER),
    code_challenge_method: 'S256',
    ...(resource ? { resource } : {}),
  };
  const requestId = await authorization.startAuthorization(parseAuthorizeParameters(query, ISSUER));
  return new URL(await authorization.approveAuthorization(user, requestId, ISSUER)).searchParams.get('code')!;
}

const exchange = (code: string, extra: Record<string, string> = {}) =>
  tokens.issueTokens(
    client,
    { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: VERIFIER, client_id: client.clientId, ...extra },
    ISSUER,
  );
const refresh = (refreshToken: string, extra: Record<string, string> = {}) =>
  tokens.issueTokens(client, { grant_type: 'refresh_token', refresh_token: refreshToken, ...extra }, ISSUER);

const resourceOf = async (accessToken: string) => (await identityService.authenticate(accessToken))?.principal.resource;
const oauthErrorOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'issued',
    (error: unknown) => (error instanceof OAuthRequestError ? error.oauthError : error),
  );

describe('resource indicators (RFC 8707)', () => {
  it('refuses a resource this server does not serve at the authorization endpoint', () => {
    const query = { response_type: 'code', client_id: randomUUID(), redirect_uri: REDIRECT_URI, state: 's' };
    expect(() => parseAuthorizeParameters({ ...query, resource: 'https://elsewhere.example/mcp' }, ISSUER)).toThrow(
      /resource must be the absolute URI of a resource this server serves/,
    );
    expect(parseAuthorizeParameters({ ...query, resource: MCP }, ISSUER).resource).toBe('mcp');
  });

  it('binds the access token to the resource the authorization asked for, through the code and every refresh', async () => {
    const issued = await exchange(await codeFor(MCP), { resource: MCP });
    expect(await resourceOf(issued.accessToken)).toBe('mcp');

    const refreshed = await refresh(issued.refreshToken);
    expect(await resourceOf(refreshed.accessToken)).toBe('mcp');
  });

  it('refuses a code exchange for another resource than the authorization’s, or one not served here, as invalid_target', async () => {
    expect(await oauthErrorOf(exchange(await codeFor(MCP), { resource: API }))).toBe('invalid_target');
    expect(await oauthErrorOf(exchange(await codeFor(MCP), { resource: 'https://elsewhere.example/mcp' }))).toBe('invalid_target');
    // A code exchanged without resource keeps the authorization's.
    expect(await resourceOf((await exchange(await codeFor(MCP))).accessToken)).toBe('mcp');
  });

  it('never widens on refresh: a grant for the MCP server refreshes for it alone, and the refused refresh leaves the token usable', async () => {
    const issued = await exchange(await codeFor(MCP));

    expect(await oauthErrorOf(refresh(issued.refreshToken, { resource: API }))).toBe('invalid_target');
    const refreshed = await refresh(issued.refreshToken, { resource: MCP });
    expect(await resourceOf(refreshed.accessToken)).toBe('mcp');
  });

  it('lets a grant made without resource narrow to the REST API, and refuses the MCP server to it', async () => {
    const issued = await exchange(await codeFor());
    expect(await resourceOf(issued.accessToken)).toBeUndefined();

    expect(await oauthErrorOf(refresh(issued.refreshToken, { resource: MCP }))).toBe('invalid_target');
    const narrowed = await refresh(issued.refreshToken, { resource: API });
    expect(await resourceOf(narrowed.accessToken)).toBe('api');
    // The grant itself stays as it was asked: the next refresh without resource is unbound again.
    expect(await resourceOf((await refresh(narrowed.refreshToken)).accessToken)).toBeUndefined();
  });

  it('binds a device authorization’s tokens to the resource the device asked for', async () => {
    const started = await devices.startDeviceAuthorization(client, { client_id: client.clientId, resource: MCP }, ISSUER);
    await devices.decide(user, started.userCode, 'approve');
    const poll = (extra: Record<string, string> = {}) =>
      tokens.issueTokens(
        client,
        { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: started.deviceCode, ...extra },
        ISSUER,
      );

    expect(await oauthErrorOf(poll({ resource: API }))).toBe('invalid_target');
    expect(await resourceOf((await poll()).accessToken)).toBe('mcp');
    await expect(
      devices.startDeviceAuthorization(client, { client_id: client.clientId, resource: `${ISSUER}/console` }, ISSUER),
    ).rejects.toMatchObject({ oauthError: 'invalid_target' });
  });

  it('reads a bound access token in one round trip: the grant holds its resource', async () => {
    const issued = await exchange(await codeFor(MCP));
    // Authentication reads on the cached-middleware client, as the token grants do (lib/store/dynamo.ts).
    const sends = [documentClient, cachedMiddlewareClient].map((client) => vi.spyOn(client, 'send'));
    try {
      expect(await resourceOf(issued.accessToken)).toBe('mcp');
      expect(sends.flatMap((send) => send.mock.calls.map(([command]) => command.constructor.name))).toEqual(['GetItemCommand']);
    } finally {
      for (const send of sends) send.mockRestore();
    }
  });
});
