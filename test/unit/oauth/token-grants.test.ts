import { describe, expect, it } from 'vitest';
import { InvalidClientError, OAuthRequestError } from '../../../lib/errors.js';
import type { ClientCredentials } from '../../../lib/oauth/client-authentication.js';
import type { TokenGrant, TokenSet } from '../../../lib/oauth/grants/grant.js';
import { TOKEN_GRANTS } from '../../../lib/oauth/grants/index.js';
import { authorizationServerMetadata } from '../../../lib/oauth/metadata.js';
import type { DeviceCodeGrantStore } from '../../../lib/oauth/grants/device-code.js';
import type { OAuthClient, TokenGrantStore } from '../../../lib/oauth/oauth-store.js';
import { type GrantDependencies, TokenGrantService } from '../../../lib/oauth/token-grants.js';

const CLIENT_ID = '0f8fad5b-d9cb-469f-a165-70867728950e';
const publicClient = { clientId: CLIENT_ID, appId: 'app', secretHash: undefined } as unknown as OAuthClient;
const credentials: ClientCredentials = { clientId: CLIENT_ID, clientSecret: '', method: 'none' };

/** Stores that know one public client and count the lookups; no grant reaches them in these tests. */
function dependencies(): GrantDependencies & { lookups: string[] } {
  const lookups: string[] = [];
  const getClient = async (clientId: string) => {
    lookups.push(clientId);
    return clientId === CLIENT_ID ? publicClient : undefined;
  };
  return {
    lookups,
    tokenGrants: { getClient } as unknown as TokenGrantStore,
    deviceCodes: { getClient } as unknown as DeviceCodeGrantStore,
  };
}

const oauthErrorOf = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => (error instanceof OAuthRequestError ? error.oauthError : error),
  );

describe('the token endpoint dispatch', () => {
  it('offers exactly the grant types the server metadata announces, each from its own module', () => {
    const grantTypes = TOKEN_GRANTS.map((Grant) => new Grant(dependencies()).grantType);
    expect(grantTypes).toEqual(authorizationServerMetadata('https://issuer.example').grant_types_supported);
  });

  it('refuses a missing grant_type as invalid_request and an unknown one as unsupported_grant_type, after the client check', async () => {
    const deps = dependencies();
    const service = new TokenGrantService(deps);

    expect(await oauthErrorOf(service.issueTokens(credentials, {}))).toBe('invalid_request');
    const unknown = service.issueTokens(credentials, { grant_type: 'password' });
    await expect(unknown).rejects.toThrow(
      'grant_type must be authorization_code, refresh_token or urn:ietf:params:oauth:grant-type:device_code',
    );
    expect(deps.lookups).toEqual([CLIENT_ID, CLIENT_ID]);
    // A client that fails authentication hears 401 first, whatever the grant type.
    await expect(service.issueTokens({ ...credentials, clientId: 'not-a-client' }, { grant_type: 'password' })).rejects.toBeInstanceOf(
      InvalidClientError,
    );
  });

  it('reaches a grant added to the registry without any change to the dispatcher', async () => {
    const issued: TokenSet = { accessToken: 'a', refreshToken: 'r', expiresIn: 60, scopes: ['containers:read'] };
    class ScratchGrant implements TokenGrant {
      readonly grantType = 'urn:example:scratch';
      readonly name = 'scratch';
      async issue(_credentials: ClientCredentials, parameters: Record<string, string>): Promise<TokenSet> {
        return { ...issued, accessToken: parameters.assertion ?? '' };
      }
    }
    const service = new TokenGrantService(dependencies(), [...TOKEN_GRANTS, ScratchGrant]);

    await expect(service.issueTokens(credentials, { grant_type: 'urn:example:scratch', assertion: 'x' })).resolves.toEqual({
      ...issued,
      accessToken: 'x',
    });
    await expect(service.issueTokens(credentials, { grant_type: 'password' })).rejects.toThrow(/or urn:example:scratch$/);
  });
});
