import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { BadRequestError, NotFoundError, UnauthorizedError } from '../../../lib/errors.js';
import type { ApiRequest } from '../../../lib/http/api-request.js';
import { ALL_SCOPES, type Principal } from '../../../lib/identity/principal.js';
import { identityService } from '../../../lib/wiring/identity.js';
import type { ClientCredentials } from '../../../lib/oauth/client-authentication.js';
import { ApplicationService } from '../../../lib/oauth/applications.js';
import { AuthorizationService } from '../../../lib/oauth/authorization.js';
import { GRANT_LIFETIME_SECONDS } from '../../../lib/oauth/lifetimes.js';
import { RevocationService } from '../../../lib/oauth/revocation.js';
import { NO_REFRESH_GRACE, type RefreshGrace } from '../../../lib/oauth/refresh-grace.js';
import { TokenGrantService, type TokenSet } from '../../../lib/oauth/token-grants.js';
import { refreshGrace } from '../../../lib/wiring/refresh-grace-key.js';
import { applicationStore, authorizationStore, deviceCodeGrantStore, revocationStore, tokenGrantStore } from '../../../lib/wiring/oauth.js';
import { s256CodeChallenge } from '../../../lib/oauth/pkce.js';
import { showConsent } from '../../../lib/pages/consent-page.js';
import { cachedMiddlewareClient, documentClient, tableName } from '../../../lib/store/dynamo.js';
import { keys } from '../../../lib/store/keys.js';
import { CREDENTIAL_PREFIX, grantIdOf, newGrantSecret, sha256Hex } from '../../../lib/identity/secrets.js';
import { holdReadsUntil } from '../../support/held-reads.js';

const REDIRECT_URI = 'http://127.0.0.1:9999/callback';
/** The issuer the consent page names in `iss` (RFC 9207). */
const ISSUER = 'https://api.example.com';
const DAY_MS = 86_400_000;

let owner: Principal;
let user: Principal;

async function principalFor(role: 'user' | 'admin'): Promise<Principal> {
  const created = await identityService.createUser({
    email: `${role}-${randomUUID()}@example.com`,
    password: 'correct horse battery',
    role,
  });
  return {
    userId: created.id,
    role,
    kind: 'session',
    scopes: ALL_SCOPES,
    credentialHash: 'not-used',
    expiresAt: new Date(Date.now() + DAY_MS).toISOString(),
  };
}

beforeAll(async () => {
  owner = await principalFor('user');
  user = await principalFor('user');
});

afterEach(() => {
  vi.restoreAllMocks();
});

/**
 * The wired key with the retry grace opted in at 10 s (the service's default is 0, product.md
 * section 9): the grace tests below need it on; the strict ones pass NO_REFRESH_GRACE.
 */
const OPTED_IN_GRACE: RefreshGrace = { seconds: 10, key: refreshGrace.key };

/** The OAuth services over the wired stores, on one clock, with the opted-in refresh retry grace unless told otherwise. */
function oauthOn(now: () => Date = () => new Date(), grace: RefreshGrace = OPTED_IN_GRACE) {
  return {
    apps: new ApplicationService(applicationStore, now),
    authorization: new AuthorizationService(authorizationStore, now),
    tokens: new TokenGrantService({ tokenGrants: tokenGrantStore, deviceCodes: deviceCodeGrantStore, now, grace }),
    revocation: new RevocationService(revocationStore, now),
  };
}
type OAuth = ReturnType<typeof oauthOn>;
const oauth = oauthOn();

interface RegisteredClient {
  appId: string;
  credentials: ClientCredentials;
}

async function registerClient(service: OAuth = oauth): Promise<RegisteredClient> {
  const { app, clientSecret } = await service.apps.registerApp(owner, { name: 'Dashboard', description: '', redirectUris: [REDIRECT_URI] });
  return { appId: app.id, credentials: { clientId: app.clientId, clientSecret: clientSecret!, method: 'client_secret_post' } };
}

/** Runs the authorize and consent steps as the user and returns the code from the redirect. */
async function authorizationCode(client: RegisteredClient, service: OAuth = oauth, codeVerifier?: string): Promise<string> {
  const requestId = await service.authorization.startAuthorization({
    clientId: client.credentials.clientId,
    redirectUri: REDIRECT_URI,
    state: 'state-1',
    scopes: [...ALL_SCOPES],
    ...(codeVerifier ? { codeChallenge: s256CodeChallenge(codeVerifier) } : {}),
  });
  const location = new URL(await service.authorization.approveAuthorization(user, requestId, ISSUER));
  expect(location.searchParams.get('state')).toBe('state-1');
  return location.searchParams.get('code')!;
}

const exchange = (client: RegisteredClient, code: string, service: OAuth = oauth, extra: Record<string, string> = {}) =>
  service.tokens.issueTokens(client.credentials, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, ...extra });

const refresh = (client: RegisteredClient, refreshToken: string, service: OAuth = oauth) =>
  service.tokens.issueTokens(client.credentials, { grant_type: 'refresh_token', refresh_token: refreshToken });

async function tokensFor(client: RegisteredClient): Promise<TokenSet> {
  return exchange(client, await authorizationCode(client));
}

const authenticates = async (accessToken: string) => (await identityService.authenticate(accessToken)) !== undefined;

type SentCommand = { constructor: { name: string }; input: Record<string, unknown> };

/**
 * Routes every call of both DynamoDB clients the stores use (lib/store/dynamo.ts) through
 * `around`, in the order they were made; `stop` puts the clients back.
 */
function interceptDynamoCalls(around: (command: SentCommand, callThrough: () => Promise<unknown>) => Promise<unknown>): {
  calls: SentCommand[];
  stop: () => void;
} {
  const calls: SentCommand[] = [];
  const spies = [documentClient, cachedMiddlewareClient].map((client) => {
    const callThrough = client.send.bind(client) as (...args: unknown[]) => Promise<unknown>;
    return vi.spyOn(client, 'send').mockImplementation((async (command: SentCommand, ...rest: unknown[]) => {
      calls.push(command);
      return around(command, () => callThrough(command, ...rest));
    }) as never);
  });
  return {
    calls,
    stop: () => {
      for (const spy of spies) spy.mockRestore();
    },
  };
}

/**
 * Counts the DynamoDB calls (round trips) made while `act` runs, and how many of them had to
 * wait for one another: a call's depth is one more than the deepest call that had finished
 * before it started, so calls made side by side count once in `serialRoundTrips`.
 */
async function countRoundTrips<T>(
  act: () => Promise<T>,
): Promise<{ result: T; roundTrips: number; serialRoundTrips: number; commands: string[]; inputs: unknown[] }> {
  let deepestFinished = 0;
  let serialRoundTrips = 0;
  const { calls, stop } = interceptDynamoCalls(async (_command, callThrough) => {
    const depth = deepestFinished + 1;
    try {
      return await callThrough();
    } finally {
      deepestFinished = Math.max(deepestFinished, depth);
      serialRoundTrips = Math.max(serialRoundTrips, depth);
    }
  });
  try {
    const result = await act();
    const commands = calls.map((command) => command.constructor.name);
    return { result, roundTrips: commands.length, serialRoundTrips, commands, inputs: calls.map((command) => command.input) };
  } finally {
    stop();
  }
}

/**
 * Sums the capacity DynamoDB reports for every call made while `act` runs: read units for
 * reads, write units for writes, and the units of any index write apart.
 */
async function measureCapacity<T>(
  act: () => Promise<T>,
): Promise<{ result: T; capacity: { writeUnits: number; readUnits: number; indexWriteUnits: number } }> {
  const capacity = { writeUnits: 0, readUnits: 0, indexWriteUnits: 0 };
  type Consumed = { CapacityUnits?: number; GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }> };
  const { stop } = interceptDynamoCalls(async (command, callThrough) => {
    command.input.ReturnConsumedCapacity = 'INDEXES';
    const output = (await callThrough()) as { ConsumedCapacity?: Consumed | Consumed[] };
    const isRead = /Get|Query/.test(command.constructor.name);
    const consumed = output.ConsumedCapacity;
    for (const entry of Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) {
      if (isRead) capacity.readUnits += entry.CapacityUnits ?? 0;
      else capacity.writeUnits += entry.CapacityUnits ?? 0;
      for (const index of Object.values(entry.GlobalSecondaryIndexes ?? {}))
        capacity.indexWriteUnits += isRead ? 0 : (index.CapacityUnits ?? 0);
    }
    return output;
  });
  try {
    return { result: await act(), capacity };
  } finally {
    stop();
  }
}

async function settle<T>(attempts: Array<Promise<T>>): Promise<{ successes: T[]; failures: unknown[] }> {
  const outcomes = await Promise.allSettled(attempts);
  return {
    successes: outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : [])),
    failures: outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : [])),
  };
}

describe('authorization code exchange', () => {
  it('costs two DynamoDB round trips: one BatchGetItem and one TransactWriteItems', async () => {
    const client = await registerClient();
    const code = await authorizationCode(client);

    const { result, roundTrips, commands } = await countRoundTrips(() => exchange(client, code));

    expect(commands).toEqual(['BatchGetItemCommand', 'TransactWriteCommand']);
    expect(roundTrips).toBeLessThanOrEqual(2);
    expect(result).toMatchObject({ expiresIn: 900, scopes: ['containers:read', 'containers:write'] });
    expect(result.accessToken).toMatch(/^svat_[\w-]{43}\.[0-9a-f-]{36}$/);
    expect(result.refreshToken).toMatch(/^svrt_[\w-]{43}\.[0-9a-f-]{36}$/);
    const authentication = await identityService.authenticate(result.accessToken);
    expect(authentication?.principal).toMatchObject({ userId: user.userId, kind: 'oauth', clientId: client.credentials.clientId });
  });

  it('lets exactly one of 20 concurrent redemptions of one code win, then revokes what the winner got', async () => {
    const client = await registerClient();
    const code = await authorizationCode(client);

    const { successes, failures } = await settle(Array.from({ length: 20 }, () => exchange(client, code)));

    expect(successes).toHaveLength(1);
    expect(failures).toHaveLength(19);
    for (const failure of failures) expect(failure).toBeInstanceOf(BadRequestError);
    const [winner] = successes as [TokenSet];
    expect(await authenticates(winner.accessToken)).toBe(false);
    await expect(refresh(client, winner.refreshToken)).rejects.toBeInstanceOf(BadRequestError);
  });

  it('lets exactly one of 20 redemptions win even when all of them read the code before any writes', async () => {
    const client = await registerClient();
    const code = await authorizationCode(client);
    holdReadsUntil(tokenGrantStore, 'getClientAndCode', 20);

    const { successes, failures } = await settle(Array.from({ length: 20 }, () => exchange(client, code)));

    expect(successes).toHaveLength(1);
    for (const failure of failures) expect(failure).toBeInstanceOf(BadRequestError);
    expect(await authenticates((successes[0] as TokenSet).accessToken)).toBe(false);
  });

  it('revokes the tokens of a code when the code is presented a second time later', async () => {
    const client = await registerClient();
    const code = await authorizationCode(client);
    const tokens = await exchange(client, code);
    expect(await authenticates(tokens.accessToken)).toBe(true);

    await expect(exchange(client, code)).rejects.toThrow(/already used/);

    expect(await authenticates(tokens.accessToken)).toBe(false);
    await expect(refresh(client, tokens.refreshToken)).rejects.toBeInstanceOf(BadRequestError);
  });

  it('refuses a code issued to another client without using it up', async () => {
    const client = await registerClient();
    const otherClient = await registerClient();
    const code = await authorizationCode(client);

    await expect(exchange(otherClient, code)).rejects.toThrow(/authorization code is invalid/);

    await expect(exchange(client, code)).resolves.toMatchObject({ expiresIn: 900 });
  });

  it('refuses a code after ten minutes', async () => {
    let now = Date.now();
    const clockedService = oauthOn(() => new Date(now));
    const client = await registerClient(clockedService);
    const code = await authorizationCode(client, clockedService);

    now += 10 * 60_000;

    await expect(exchange(client, code, clockedService)).rejects.toThrow(/expired/);
  });

  it('needs the PKCE verifier that matches the challenge', async () => {
    const client = await registerClient();
    const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
    const code = await authorizationCode(client, oauth, verifier);

    await expect(exchange(client, code)).rejects.toThrow(/code_verifier is required/);
    await expect(exchange(client, code, oauth, { code_verifier: `${verifier.slice(0, -1)}Y` })).rejects.toThrow(/does not match/);

    await expect(exchange(client, code, oauth, { code_verifier: verifier })).resolves.toMatchObject({ expiresIn: 900 });
  });
});

describe('refresh token rotation', () => {
  it('costs two DynamoDB round trips: one BatchGetItem of the client and the grant, then one UpdateItem of the grant', async () => {
    const client = await registerClient();
    const tokens = await tokensFor(client);

    const { result, roundTrips, serialRoundTrips, commands, inputs } = await countRoundTrips(() => refresh(client, tokens.refreshToken));

    expect(commands).toEqual(['BatchGetItemCommand', 'UpdateItemCommand']);
    expect(roundTrips).toBe(2);
    expect(serialRoundTrips).toBe(2);
    const read = inputs[0] as { RequestItems: Record<string, { Keys: unknown[] }> };
    expect(Object.values(read.RequestItems)[0]!.Keys).toHaveLength(2);
    expect(result.refreshToken).not.toBe(tokens.refreshToken);
    expect(await authenticates(result.accessToken)).toBe(true);
  });

  it('reads 2 units and writes 1: the grant, under 1 KB, updated without a transaction or an index write', async () => {
    const client = await registerClient();
    const tokens = await tokensFor(client);
    // The largest grant item: an access token of narrower scopes beside one of the grant's.
    const narrowRefresh = (refreshToken: string) =>
      oauth.tokens.issueTokens(client.credentials, { grant_type: 'refresh_token', refresh_token: refreshToken, scope: 'containers:read' });
    const narrower = await narrowRefresh(tokens.refreshToken);

    const { result, capacity } = await measureCapacity(() => narrowRefresh(narrower.refreshToken));

    // DynamoDB Local reports ConsumedCapacity when asked (ReturnConsumedCapacity: INDEXES): 2
    // strongly consistent reads of items under 4 KB, and 1 write unit, which DynamoDB charges
    // for an item of at most 1 KB (the larger of its sizes before and after the update).
    expect(capacity.readUnits).toBe(2);
    expect(capacity.writeUnits).toBe(1);
    expect(capacity.indexWriteUnits).toBe(0);
    expect(await authenticates(result.accessToken)).toBe(true);
    expect(await authenticates(narrower.accessToken)).toBe(true);
  });

  it('holds an access token of narrower scopes to them, also once a full refresh has made it the previous one', async () => {
    const client = await registerClient();
    const tokens = await tokensFor(client);
    const narrower = await oauth.tokens.issueTokens(client.credentials, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refreshToken,
      scope: 'containers:read',
    });
    const scopesOf = async (accessToken: string) => (await identityService.authenticate(accessToken))?.principal.scopes;

    expect(await scopesOf(narrower.accessToken)).toEqual(['containers:read']);
    const full = await refresh(client, narrower.refreshToken);
    expect(await scopesOf(narrower.accessToken)).toEqual(['containers:read']);
    expect(await scopesOf(full.accessToken)).toEqual(['containers:read', 'containers:write']);
  });

  it('keeps refreshing a grant written before tokens lived in it, with its refresh token’s old 30-day expiry', async () => {
    const client = await registerClient();
    const recent = await tokensFor(client);
    const stale = await tokensFor(client);
    // What a grant looked like before: no refresh expiry or access tokens in it, a previous refresh hash.
    const asBefore = (refreshToken: string, lastUsedDaysAgo: number) =>
      documentClient.send(
        new UpdateCommand({
          TableName: tableName,
          Key: keys.grant(grantIdOf(refreshToken)!),
          UpdateExpression: 'SET previous_refresh_hash = :old, last_used_at = :lastUsed REMOVE refresh_expires_at, access_token',
          ExpressionAttributeValues: {
            ':old': 'f'.repeat(64),
            ':lastUsed': new Date(Date.now() - lastUsedDaysAgo * 86_400_000).toISOString(),
          },
        }),
      );
    await asBefore(recent.refreshToken, 1);
    await asBefore(stale.refreshToken, 31);

    await expect(refresh(client, stale.refreshToken)).rejects.toThrow(/expired/);
    const next = await refresh(client, recent.refreshToken);
    expect(await authenticates(next.accessToken)).toBe(true);
    const { Item } = await documentClient.send(
      new GetCommand({ TableName: tableName, Key: keys.grant(grantIdOf(recent.refreshToken)!), ConsistentRead: true }),
    );
    expect(Item).not.toHaveProperty('previous_refresh_hash');
    expect(Item).toHaveProperty('refresh_expires_at');
  });

  it('never lets a rotation that lost change the grant', async () => {
    const client = await registerClient();
    const first = await tokensFor(client);
    const second = await refresh(client, first.refreshToken);
    const grantId = grantIdOf(first.refreshToken)!;
    // A second refresh of the same token that read before the first one wrote: the grant's condition refuses it.
    const lateRefresh = newGrantSecret(CREDENTIAL_PREFIX.refreshToken, grantId);
    const lateAccess = newGrantSecret(CREDENTIAL_PREFIX.accessToken, grantId);
    const expiresAt = new Date(Date.now() + 900_000).toISOString();
    const outcome = await tokenGrantStore.rotateRefreshToken(
      grantId,
      sha256Hex(first.refreshToken),
      {
        refreshTokenHash: sha256Hex(lateRefresh),
        refreshExpiresAt: expiresAt,
        accessToken: { tokenHash: sha256Hex(lateAccess), expiresAt },
      },
      new Date().toISOString(),
    );

    expect(outcome).toMatchObject({ committed: false, reason: 'already-used' });
    expect(await authenticates(lateAccess)).toBe(false);
    expect(await authenticates(second.accessToken)).toBe(true);
    await expect(refresh(client, second.refreshToken)).resolves.toMatchObject({ expiresIn: 900 });
  });

  it('keeps an access token live until the refresh after next', async () => {
    const client = await registerClient();
    const first = await tokensFor(client);
    const second = await refresh(client, first.refreshToken);
    // The access token of the rotation just replaced still works: a client may have requests in flight.
    expect(await authenticates(first.accessToken)).toBe(true);
    const third = await refresh(client, second.refreshToken);
    expect(await authenticates(first.accessToken)).toBe(false);
    expect(await authenticates(second.accessToken)).toBe(true);
    expect(await authenticates(third.accessToken)).toBe(true);
  });

  it('authenticates an access token in one round trip: one GetItem of the grant, which holds the token’s hash', async () => {
    const client = await registerClient();
    const tokens = await tokensFor(client);

    const { result, commands } = await countRoundTrips(() => identityService.authenticate(tokens.accessToken));

    expect(commands).toEqual(['GetItemCommand']);
    expect(result?.principal).toMatchObject({ userId: user.userId, kind: 'oauth' });
  });

  it('takes a refresh token that names one of the client’s grants but is not its current one as a replay of that grant only', async () => {
    const client = await registerClient();
    const first = await tokensFor(client);
    const second = await tokensFor(client);
    const otherGrantId = second.refreshToken.slice(second.refreshToken.lastIndexOf('.') + 1);
    const swapped = `${first.refreshToken.slice(0, first.refreshToken.lastIndexOf('.'))}.${otherGrantId}`;

    await expect(refresh(client, swapped)).rejects.toThrow(/already used/);

    expect(await authenticates(second.accessToken)).toBe(false);
    await expect(refresh(client, second.refreshToken)).rejects.toThrow(/revoked/);
    expect(await authenticates(first.accessToken)).toBe(true);
    await expect(refresh(client, first.refreshToken)).resolves.toMatchObject({ expiresIn: 900 });
  });

  it('revokes nothing for a token that names another client’s grant, and says nothing of that grant', async () => {
    const client = await registerClient();
    const other = await registerClient();
    const theirs = await tokensFor(other);
    const theirGrantId = grantIdOf(theirs.refreshToken)!;
    const made = `${newGrantSecret(CREDENTIAL_PREFIX.refreshToken, theirGrantId)}`;

    await expect(refresh(client, made)).rejects.toThrow(/refresh token is invalid/);
    await expect(refresh(client, theirs.refreshToken)).rejects.toThrow(/refresh token is invalid/);
    // RFC 7009: a made-up token is unknown (200); the other client's real one is refused.
    await expect(oauth.revocation.revokeToken(client.credentials, { token: made })).resolves.toBeUndefined();
    await expect(oauth.revocation.revokeToken(client.credentials, { token: theirs.accessToken })).rejects.toThrow(
      /not issued to this client/,
    );

    expect(await authenticates(theirs.accessToken)).toBe(true);
    await expect(refresh(other, theirs.refreshToken)).resolves.toMatchObject({ expiresIn: 900 });
  });

  it('lets exactly one of 20 concurrent refreshes of one token win when the retry grace is off', async () => {
    const strict = oauthOn(undefined, NO_REFRESH_GRACE);
    const client = await registerClient(strict);
    const tokens = await exchange(client, await authorizationCode(client, strict), strict);

    const { successes, failures } = await settle(Array.from({ length: 20 }, () => refresh(client, tokens.refreshToken, strict)));

    expect(successes).toHaveLength(1);
    expect(failures).toHaveLength(19);
    for (const failure of failures) expect(failure).toBeInstanceOf(BadRequestError);
    // The losers presented a token that was rotated by then: reuse, so the grant is revoked.
    const [winner] = successes as [TokenSet];
    expect(await authenticates(winner.accessToken)).toBe(false);
  });

  it('answers all of 20 concurrent refreshes of one token with one and the same pair, and revokes nothing', async () => {
    const client = await registerClient();
    const tokens = await tokensFor(client);

    const { successes, failures } = await settle(Array.from({ length: 20 }, () => refresh(client, tokens.refreshToken)));

    expect(failures).toEqual([]);
    expect(successes).toHaveLength(20);
    const pairs = new Set(successes.map((set) => `${set.accessToken} ${set.refreshToken}`));
    expect(pairs.size).toBe(1);
    const [first] = successes as [TokenSet];
    expect(first.refreshToken).not.toBe(tokens.refreshToken);
    for (const set of successes) expect(set.scopes).toEqual(first.scopes);
    expect(await authenticates(first.accessToken)).toBe(true);
    await expect(refresh(client, first.refreshToken)).resolves.toMatchObject({ expiresIn: 900 });
  });

  it('answers all of 20 refreshes alike even when all of them read the token before any writes', async () => {
    const client = await registerClient();
    const tokens = await tokensFor(client);
    holdReadsUntil(tokenGrantStore, 'getTokenGrant', 20);

    const { successes, failures } = await settle(Array.from({ length: 20 }, () => refresh(client, tokens.refreshToken)));

    expect(failures).toEqual([]);
    expect(new Set(successes.map((set) => `${set.accessToken} ${set.refreshToken}`)).size).toBe(1);
    expect(await authenticates((successes[0] as TokenSet).accessToken)).toBe(true);
  });

  it('answers a retry inside the grace with one BatchGetItem and no write, and a losing concurrent one with no extra read', async () => {
    const client = await registerClient();
    const tokens = await tokensFor(client);
    const next = await tokensFor(client);
    const first = await refresh(client, tokens.refreshToken);

    const retry = await countRoundTrips(() => refresh(client, tokens.refreshToken));
    expect(retry.commands).toEqual(['BatchGetItemCommand']);
    expect(retry.result).toMatchObject({ accessToken: first.accessToken, refreshToken: first.refreshToken });

    // Two at once that both read before either writes: each makes one read and one write, nothing more.
    holdReadsUntil(tokenGrantStore, 'getTokenGrant', 2);
    const race = await countRoundTrips(() => Promise.all([refresh(client, next.refreshToken), refresh(client, next.refreshToken)]));
    expect(race.commands.sort()).toEqual(['BatchGetItemCommand', 'BatchGetItemCommand', 'UpdateItemCommand', 'UpdateItemCommand']);
    expect(race.serialRoundTrips).toBe(2);
    expect(race.result[0]).toEqual(race.result[1]);
  });

  it('takes a retry once the grace has passed as a replay, and revokes the grant', async () => {
    let now = Date.now();
    const clocked = oauthOn(() => new Date(now));
    const client = await registerClient(clocked);
    const tokens = await exchange(client, await authorizationCode(client, clocked), clocked);
    const first = await refresh(client, tokens.refreshToken, clocked);
    now += 10_000;
    await expect(refresh(client, tokens.refreshToken, clocked)).resolves.toMatchObject({ refreshToken: first.refreshToken });

    now += 1;

    await expect(refresh(client, tokens.refreshToken, clocked)).rejects.toThrow(/already used/);
    expect(await authenticates(first.accessToken)).toBe(false);
    await expect(refresh(client, first.refreshToken, clocked)).rejects.toThrow(/revoked/);
  });

  it('takes a retry once the successor was used as a replay, and revokes the grant', async () => {
    const client = await registerClient();
    const tokens = await tokensFor(client);
    const first = await refresh(client, tokens.refreshToken);
    const second = await refresh(client, first.refreshToken);

    await expect(refresh(client, tokens.refreshToken)).rejects.toThrow(/already used/);

    expect(await authenticates(second.accessToken)).toBe(false);
    await expect(refresh(client, second.refreshToken)).rejects.toThrow(/revoked/);
  });

  it('takes a retry asking for other scopes than its rotation got as a replay', async () => {
    const client = await registerClient();
    const tokens = await tokensFor(client);
    await refresh(client, tokens.refreshToken);

    await expect(
      oauth.tokens.issueTokens(client.credentials, {
        grant_type: 'refresh_token',
        refresh_token: tokens.refreshToken,
        scope: 'containers:read',
      }),
    ).rejects.toThrow(/already used/);
  });

  it('takes a retry as a replay once the access token its rotation handed out was revoked', async () => {
    const client = await registerClient();
    const tokens = await tokensFor(client);
    const first = await refresh(client, tokens.refreshToken);
    await oauth.revocation.revokeToken(client.credentials, { token: first.accessToken });

    await expect(refresh(client, tokens.refreshToken)).rejects.toThrow(/already used/);
    await expect(refresh(client, first.refreshToken)).rejects.toThrow(/revoked/);
  });

  it('revokes the whole grant when a rotated refresh token is replayed', async () => {
    const client = await registerClient();
    const first = await tokensFor(client);
    const second = await refresh(client, first.refreshToken);
    const third = await refresh(client, second.refreshToken);
    expect(await authenticates(third.accessToken)).toBe(true);

    await expect(refresh(client, first.refreshToken)).rejects.toThrow(/already used/);

    expect(await authenticates(first.accessToken)).toBe(false);
    expect(await authenticates(second.accessToken)).toBe(false);
    expect(await authenticates(third.accessToken)).toBe(false);
    await expect(refresh(client, third.refreshToken)).rejects.toBeInstanceOf(BadRequestError);
  });

  it('refuses a refresh token presented by another client, and leaves it usable', async () => {
    const client = await registerClient();
    const otherClient = await registerClient();
    const tokens = await tokensFor(client);

    await expect(refresh(otherClient, tokens.refreshToken)).rejects.toThrow(/refresh token is invalid/);

    await expect(refresh(client, tokens.refreshToken)).resolves.toMatchObject({ expiresIn: 900 });
  });

  it('never issues a token that outlives the 90-day grant', async () => {
    let now = Date.now();
    const clockedService = oauthOn(() => new Date(now));
    const client = await registerClient(clockedService);
    const grantedAt = now;
    let tokens = await exchange(client, await authorizationCode(client, clockedService), clockedService);

    for (const day of [29, 58, 87]) {
      now = grantedAt + day * DAY_MS;
      tokens = await refresh(client, tokens.refreshToken, clockedService);
      expect(tokens.expiresIn).toBe(900);
    }
    now = grantedAt + GRANT_LIFETIME_SECONDS * 1000 - 100_000;
    tokens = await refresh(client, tokens.refreshToken, clockedService);
    expect(tokens.expiresIn).toBe(100);

    now = grantedAt + GRANT_LIFETIME_SECONDS * 1000;
    await expect(refresh(client, tokens.refreshToken, clockedService)).rejects.toThrow(/expired/);
  });

  it('refuses a refresh token after 30 days', async () => {
    let now = Date.now();
    const clockedService = oauthOn(() => new Date(now));
    const client = await registerClient(clockedService);
    const tokens = await exchange(client, await authorizationCode(client, clockedService), clockedService);

    now += 30 * DAY_MS;

    await expect(refresh(client, tokens.refreshToken, clockedService)).rejects.toThrow(/expired/);
  });
});

const startRequest = (client: RegisteredClient): Promise<string> =>
  oauth.authorization.startAuthorization({
    clientId: client.credentials.clientId,
    redirectUri: REDIRECT_URI,
    state: 'state-1',
    scopes: [...ALL_SCOPES],
  });

/** GET /oauth/consent as the endpoint hands it over, the session already authenticated. */
const consentPageRequest = (requestId: string, who: Principal): ApiRequest => ({
  requestId: 'req-test',
  method: 'GET',
  path: '/oauth/consent',
  origin: 'http://127.0.0.1:3000',
  basePath: '',
  params: {},
  query: { request: requestId },
  headers: {},
  cookies: {},
  body: undefined,
  sourceIp: '127.0.0.1',
  principal: { ...who, csrfToken: 'csrf-token' },
});

describe('the consent page', () => {
  it('costs two serial DynamoDB round trips after authentication: the request and the user side by side, then the remembered-consent Query', async () => {
    const { app } = await oauth.apps.registerApp(owner, {
      name: 'Dashboard',
      description: 'Shows your containers',
      redirectUris: [REDIRECT_URI],
    });
    const requestId = await oauth.authorization.startAuthorization({
      clientId: app.clientId,
      redirectUri: REDIRECT_URI,
      state: 's',
      scopes: [...ALL_SCOPES],
    });
    const { email } = await identityService.getUser(user.userId);

    const { result, serialRoundTrips, commands } = await countRoundTrips(() =>
      showConsent(consentPageRequest(requestId, user), { identityService, authorizationService: oauth.authorization }),
    );

    expect(commands).toEqual(['GetCommand', 'GetCommand', 'QueryCommand']);
    expect(serialRoundTrips).toBe(2);
    expect(result.statusCode).toBe(200);
    expect(result.body).toContain('<span id="app-name">Dashboard</span>');
    expect(result.body).toContain('Shows your containers');
    expect(result.body).toContain(email);
  });

  it('costs one serial round trip for prompt=consent, which never looks for a remembered grant', async () => {
    const client = await registerClient();
    await tokensFor(client);
    const requestId = await oauth.authorization.startAuthorization({
      clientId: client.credentials.clientId,
      redirectUri: REDIRECT_URI,
      state: 's',
      scopes: [...ALL_SCOPES],
      prompt: 'consent',
    });

    const { result, serialRoundTrips, commands } = await countRoundTrips(() =>
      showConsent(consentPageRequest(requestId, user), { identityService, authorizationService: oauth.authorization }),
    );

    expect(commands).toEqual(['GetCommand', 'GetCommand']);
    expect(serialRoundTrips).toBe(1);
    expect(result.statusCode).toBe(200);
  });

  it('approves at once, with exactly the requested scopes, when a live grant of the user covers the request', async () => {
    const client = await registerClient();
    await tokensFor(client);
    const requestId = await oauth.authorization.startAuthorization({
      clientId: client.credentials.clientId,
      redirectUri: REDIRECT_URI,
      state: 'again',
      scopes: ['containers:read'],
    });

    const result = await showConsent(consentPageRequest(requestId, user), { identityService, authorizationService: oauth.authorization });

    expect(result.statusCode).toBe(303);
    const location = new URL(result.headers.Location!);
    expect(location.href.startsWith(REDIRECT_URI)).toBe(true);
    expect(location.searchParams.get('state')).toBe('again');
    const tokens = await exchange(client, location.searchParams.get('code')!);
    // RFC 6749 section 3.3: what was asked for, not the remembered grant's wider scopes.
    expect(tokens.scopes).toEqual(['containers:read']);
    const authentication = await identityService.authenticate(tokens.accessToken);
    expect(authentication?.principal.scopes).toEqual(['containers:read']);
    const refreshed = await refresh(client, tokens.refreshToken);
    expect(refreshed.scopes).toEqual(['containers:read']);
    await expect(
      oauth.tokens.issueTokens(client.credentials, {
        grant_type: 'refresh_token',
        refresh_token: refreshed.refreshToken,
        scope: 'containers:read containers:write',
      }),
    ).rejects.toThrow(/may not exceed/);
    // The request was consumed like any approval.
    await expect(oauth.authorization.approveAuthorization(user, requestId, ISSUER)).rejects.toBeInstanceOf(BadRequestError);
  });

  it('fails with NotFound when the signed-in user no longer exists (the route renders it as a page: test/e2e/oauth-api.test.ts)', async () => {
    const requestId = await startRequest(await registerClient());

    const result = showConsent(consentPageRequest(requestId, { ...user, userId: randomUUID() }), {
      identityService,
      authorizationService: oauth.authorization,
    });

    await expect(result).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('the consent decision', () => {
  it('refuses approve and deny for a redirect URI the application has since removed, and leaves the request unanswered', async () => {
    const client = await registerClient();
    const requestId = await startRequest(client);
    await oauth.apps.updateApp(owner, client.appId, { redirectUris: ['http://127.0.0.1:9999/elsewhere'] });

    await expect(oauth.authorization.approveAuthorization(user, requestId, ISSUER)).rejects.toThrow(/no longer accepts this redirect URI/);
    await expect(oauth.authorization.denyAuthorization(requestId, ISSUER)).rejects.toThrow(/no longer accepts this redirect URI/);

    await oauth.apps.updateApp(owner, client.appId, { redirectUris: [REDIRECT_URI] });
    const location = new URL(await oauth.authorization.denyAuthorization(requestId, ISSUER));
    expect(Object.fromEntries(location.searchParams)).toEqual({ error: 'access_denied', state: 'state-1', iss: ISSUER });
  });

  it('refuses to deny once the application is deleted', async () => {
    const client = await registerClient();
    const requestId = await startRequest(client);
    await oauth.apps.deleteApp(owner, client.appId);

    await expect(oauth.authorization.denyAuthorization(requestId, ISSUER)).rejects.toBeInstanceOf(BadRequestError);
  });

  it('lets exactly one of 20 decisions on one request win even when all of them read it before any consumes it', async () => {
    const requestId = await startRequest(await registerClient());
    holdReadsUntil(authorizationStore, 'getAuthorizationRequest', 20);

    const { successes, failures } = await settle(
      Array.from({ length: 20 }, (_, index) =>
        index % 2 === 0
          ? oauth.authorization.approveAuthorization(user, requestId, ISSUER)
          : oauth.authorization.denyAuthorization(requestId, ISSUER),
      ),
    );

    expect(successes).toHaveLength(1);
    for (const failure of failures) expect(failure).toBeInstanceOf(BadRequestError);
  });
});

describe('client secret rotation', () => {
  it('stops the old secret at once when asked for no overlap, and accepts the new one', async () => {
    const client = await registerClient();
    const tokens = await tokensFor(client);
    const code = await authorizationCode(client);

    const { app, clientSecret } = await oauth.apps.rotateClientSecret(owner, client.appId, 0);

    expect(app.previousSecretExpiresAt).toBeUndefined();
    await expect(refresh(client, tokens.refreshToken)).rejects.toBeInstanceOf(UnauthorizedError);
    await expect(exchange(client, code)).rejects.toBeInstanceOf(UnauthorizedError);
    const rotated = { ...client, credentials: { ...client.credentials, clientSecret } };
    await expect(refresh(rotated, tokens.refreshToken)).resolves.toMatchObject({ expiresIn: 900 });
    await expect(exchange(rotated, code)).resolves.toMatchObject({ expiresIn: 900 });
  });

  it('keeps the previous secret working at the token and revocation endpoints until its overlap ends, and not a second longer', async () => {
    let now = Date.now();
    const clocked = oauthOn(() => new Date(now));
    const client = await registerClient(clocked);
    const tokens = await exchange(client, await authorizationCode(client, clocked), clocked);

    // An overlap is opted into: without one the old secret stops at once.
    const { app, clientSecret } = await clocked.apps.rotateClientSecret(owner, client.appId, 86_400);

    expect(app.previousSecretExpiresAt).toBe(new Date(now + 86_400_000).toISOString());
    expect((await clocked.apps.getApp(owner, client.appId)).previousSecretExpiresAt).toBe(app.previousSecretExpiresAt);
    const rotated = { ...client, credentials: { ...client.credentials, clientSecret } };
    const viaOld = await refresh(client, tokens.refreshToken, clocked);
    const viaNew = await refresh(rotated, viaOld.refreshToken, clocked);
    await expect(clocked.revocation.revokeToken(client.credentials, { token: viaNew.accessToken })).resolves.toBeUndefined();
    expect(await authenticates(viaNew.accessToken)).toBe(false);

    now += 86_400_000;

    await expect(refresh(client, viaNew.refreshToken, clocked)).rejects.toBeInstanceOf(UnauthorizedError);
    await expect(clocked.revocation.revokeToken(client.credentials, { token: viaNew.refreshToken })).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    await expect(refresh(rotated, viaNew.refreshToken, clocked)).resolves.toMatchObject({ expiresIn: 900 });
  });

  it('lets a second rotation replace the previous secret: the first secret stops, the second is now the previous one', async () => {
    const client = await registerClient();
    const tokens = await tokensFor(client);
    const second = (await oauth.apps.rotateClientSecret(owner, client.appId, 86_400)).clientSecret;
    const third = (await oauth.apps.rotateClientSecret(owner, client.appId, 60)).clientSecret;
    const withSecret = (clientSecret: string) => ({ ...client, credentials: { ...client.credentials, clientSecret } });

    await expect(refresh(client, tokens.refreshToken)).rejects.toBeInstanceOf(UnauthorizedError);
    const viaSecond = await refresh(withSecret(second), tokens.refreshToken);
    await expect(refresh(withSecret(third), viaSecond.refreshToken)).resolves.toMatchObject({ expiresIn: 900 });
  });

  it('ends the overlap at once, and answers 404 to anyone but the owner', async () => {
    const client = await registerClient();
    const tokens = await tokensFor(client);
    await oauth.apps.rotateClientSecret(owner, client.appId, 86_400);

    await expect(oauth.apps.endPreviousSecret(user, client.appId)).rejects.toThrow(/not found/i);
    const app = await oauth.apps.endPreviousSecret(owner, client.appId);

    expect(app.previousSecretExpiresAt).toBeUndefined();
    expect((await oauth.apps.getApp(owner, client.appId)).previousSecretExpiresAt).toBeUndefined();
    await expect(refresh(client, tokens.refreshToken)).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it('authenticates with the previous secret at no extra cost: a refresh stays one BatchGetItem and one UpdateItem', async () => {
    const client = await registerClient();
    const tokens = await tokensFor(client);
    await oauth.apps.rotateClientSecret(owner, client.appId, 86_400);

    const { commands } = await countRoundTrips(() => refresh(client, tokens.refreshToken));

    expect(commands).toEqual(['BatchGetItemCommand', 'UpdateItemCommand']);
  });
});

describe('application deletion', () => {
  it('stops every code, access token and refresh token of the application before it returns', async () => {
    const client = await registerClient();
    const first = await tokensFor(client);
    const second = await tokensFor(client);
    const unusedCode = await authorizationCode(client);
    const pendingRequest = await oauth.authorization.startAuthorization({
      clientId: client.credentials.clientId,
      redirectUri: REDIRECT_URI,
      state: 's',
      scopes: [...ALL_SCOPES],
    });

    await oauth.apps.deleteApp(owner, client.appId);

    expect(await authenticates(first.accessToken)).toBe(false);
    expect(await authenticates(second.accessToken)).toBe(false);
    await expect(refresh(client, first.refreshToken)).rejects.toBeInstanceOf(UnauthorizedError);
    await expect(exchange(client, unusedCode)).rejects.toBeInstanceOf(UnauthorizedError);
    await expect(oauth.authorization.approveAuthorization(user, pendingRequest, ISSUER)).rejects.toBeInstanceOf(BadRequestError);
    const { Items } = await documentClient.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.oauthAppPartition(client.appId) },
        ConsistentRead: true,
      }),
    );
    expect(Items).toEqual([]);
  });

  it('is refused for anyone but the owner', async () => {
    const client = await registerClient();

    await expect(oauth.apps.deleteApp(user, client.appId)).rejects.toThrow(/not found/);

    await expect(oauth.apps.getApp(owner, client.appId)).resolves.toMatchObject({ id: client.appId });
  });
});

describe('revocation', () => {
  it('revokes the whole grant of a refresh token', async () => {
    const client = await registerClient();
    const first = await tokensFor(client);
    const second = await refresh(client, first.refreshToken);

    await oauth.revocation.revokeToken(client.credentials, { token: second.refreshToken });

    expect(await authenticates(first.accessToken)).toBe(false);
    expect(await authenticates(second.accessToken)).toBe(false);
    await expect(refresh(client, second.refreshToken)).rejects.toBeInstanceOf(BadRequestError);
  });

  it('refuses to revoke another client’s token, and revokes nothing', async () => {
    const client = await registerClient();
    const otherClient = await registerClient();
    const tokens = await tokensFor(client);

    await expect(oauth.revocation.revokeToken(otherClient.credentials, { refresh_token: tokens.refreshToken })).rejects.toBeInstanceOf(
      BadRequestError,
    );

    expect(await authenticates(tokens.accessToken)).toBe(true);
  });

  it('revokes a single access token and leaves the refresh token working', async () => {
    const client = await registerClient();
    const tokens = await tokensFor(client);

    await oauth.revocation.revokeToken(client.credentials, { token: tokens.accessToken });

    expect(await authenticates(tokens.accessToken)).toBe(false);
    const next = await refresh(client, tokens.refreshToken);
    expect(next).toMatchObject({ expiresIn: 900 });
    // The refresh moves nothing into the previous place: the revoked token stays revoked.
    expect(await authenticates(tokens.accessToken)).toBe(false);
    expect(await authenticates(next.accessToken)).toBe(true);
  });

  it('ends the grant for any refresh token the client names it with, current, rotated or made up', async () => {
    const client = await registerClient();
    const tokens = await tokensFor(client);
    const madeUp = newGrantSecret(CREDENTIAL_PREFIX.refreshToken, grantIdOf(tokens.refreshToken)!);

    await oauth.revocation.revokeToken(client.credentials, { token: madeUp });

    expect(await authenticates(tokens.accessToken)).toBe(false);
    await expect(refresh(client, tokens.refreshToken)).rejects.toThrow(/revoked/);
  });

  it('revokes an access token a refresh has moved to previous, even when the refresh lands between the read and the write', async () => {
    const client = await registerClient();
    const tokens = await tokensFor(client);
    const grantId = grantIdOf(tokens.accessToken)!;
    // The revocation reads the grant while the token is still current; a refresh then moves it.
    let next: TokenSet | undefined;
    const read = revocationStore.getTokenGrant.bind(revocationStore);
    const spy = vi.spyOn(revocationStore, 'getTokenGrant').mockImplementation(async (...args) => {
      const found = await read(...args);
      next = await refresh(client, tokens.refreshToken);
      return found;
    });

    await oauth.revocation.revokeToken(client.credentials, { token: tokens.accessToken });
    spy.mockRestore();

    expect(grantIdOf(next!.accessToken)).toBe(grantId);
    expect(await authenticates(tokens.accessToken)).toBe(false);
    expect(await authenticates(next!.accessToken)).toBe(true);
    await expect(refresh(client, next!.refreshToken)).resolves.toMatchObject({ expiresIn: 900 });
  });
});
