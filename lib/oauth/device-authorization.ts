import { randomBytes } from 'node:crypto';
import { BadRequestError, invalidGrant, invalidScope, OAuthRequestError, RateLimitedError } from '../errors.js';
import type { OAuthScope, Principal, Role } from '../identity/principal.js';
import { CREDENTIAL_PREFIX, constantTimeEqual, MAX_CREDENTIAL_LENGTH, newGrantSecret, newSecret, sha256Hex } from '../identity/secrets.js';
import { newId } from '../ids.js';
import { authenticateClient, type ClientCredentials, invalidClient, isPlausibleClientId, verifyClient } from './client-authentication.js';
import {
  ACCESS_TOKEN_LIFETIME_SECONDS,
  earlier,
  GRANT_LIFETIME_SECONDS,
  hasExpired,
  isoAfter,
  REFRESH_TOKEN_LIFETIME_SECONDS,
} from './lifetimes.js';
import { FIRST_PARTY_CLI_CLIENT_ID, firstPartyCliApp } from './first-party-client.js';
import type { AppSummary, Grant, OAuthApp, OAuthClient, TokenWriteOutcome } from './oauth-store.js';
import { parseScope } from './scopes.js';
import type { TokenSet } from './token-grants.js';

/** RFC 8628 section 3.4: the grant type a device polls the token endpoint with. */
export const DEVICE_CODE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

/** A device code: this prefix and 256 random bits, stored only as its hash. */
const DEVICE_CODE_PREFIX = 'svdc_';

/** How long a device authorization waits for the user (RFC 8628 section 3.2 `expires_in`). */
export const DEVICE_CODE_LIFETIME_SECONDS = 600;
/** The poll interval a device starts with, and what each `slow_down` adds (RFC 8628 section 3.5). */
export const DEVICE_POLL_INTERVAL_SECONDS = 5;
export const SLOW_DOWN_STEP_SECONDS = 5;
/** Clocks of two function instances may differ a little; a poll this much early still counts as on time. */
const POLL_CLOCK_TOLERANCE_MS = 250;

/**
 * RFC 8628 section 6.1: consonants only (no vowels, so no words), without the look-alikes
 * a person might mistype. 20 letters, 8 of them: about 34.6 bits, against at most 5 wrong
 * guesses a minute per session.
 */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const USER_CODE_LENGTH = 8;
/** Wrong codes a session may type in one window before it has to wait (docs/oauth.md, "Device authorization"). */
export const WRONG_USER_CODE_LIMIT = 5;
export const WRONG_USER_CODE_WINDOW_SECONDS = 60;

/** The device page's path (RFC 8628 section 3.2 `verification_uri`). */
export const DEVICE_PAGE_PATH = '/device';

export type DeviceAuthorizationStatus = 'pending' | 'approved' | 'denied' | 'redeemed';

/**
 * A device authorization (RFC 8628): found by the hash of its device code (the device polls) and,
 * through a second item, by the hash of its user code (the person types it). Both codes are
 * credentials, so neither is stored as it is.
 */
export interface DeviceAuthorization {
  deviceCodeHash: string;
  userCodeHash: string;
  clientId: string;
  appId: string;
  /** What the device page shows of the application, as it was when the device asked. */
  app: AppSummary;
  scopes: OAuthScope[];
  status: DeviceAuthorizationStatus;
  /** Set by the approval: whose grant the device gets. */
  userId?: string;
  role?: Role;
  /** Chosen when the device asks, so the grant's id is known before it exists. */
  grantId: string;
  intervalSeconds: number;
  lastPolledAt?: string;
  expiresAt: string;
}

/** What the device page needs of a user code: which device authorization it names, and what it shows. */
export interface UserCodeEntry {
  deviceCodeHash: string;
  app: AppSummary;
  scopes: OAuthScope[];
  expiresAt: string;
}

export interface DeviceAuthorizationStore {
  getClient(clientId: string): Promise<OAuthClient | undefined>;
  getApp(appId: string): Promise<OAuthApp | undefined>;
  /** Creates a public client's application and client unless they exist; returns the client either way. */
  provisionClient(app: OAuthApp): Promise<OAuthClient>;
  /** Writes the device authorization and its user-code entry together; false if either hash is taken. */
  putDeviceAuthorization(authorization: DeviceAuthorization): Promise<boolean>;
  getUserCode(userCodeHash: string): Promise<UserCodeEntry | undefined>;
  getDeviceAuthorization(deviceCodeHash: string): Promise<DeviceAuthorization | undefined>;
  /** The user's decision, once: false unless the authorization was still pending and unexpired at `now`. */
  decide(
    deviceCodeHash: string,
    decision: { status: 'approved'; userId: string; role: Role } | { status: 'denied' },
    now: string,
  ): Promise<boolean>;
  /**
   * Counts one wrong code against the session: false when it has already typed `limit` in the
   * current window, with the seconds until the window ends.
   */
  countWrongUserCode(
    sessionHash: string,
    now: Date,
    windowSeconds: number,
    limit: number,
  ): Promise<{ allowed: boolean; retryAfterSeconds: number }>;
  /** The client and the device authorization in one round trip. */
  getClientAndDeviceAuthorization(
    clientId: string,
    deviceCodeHash: string,
  ): Promise<{ client?: OAuthClient; authorization?: DeviceAuthorization }>;
  /** Records a poll; with `intervalSeconds`, the device was told to slow down to it. */
  recordPoll(deviceCodeHash: string, polledAt: string, intervalSeconds?: number): Promise<void>;
  /**
   * One transaction: marks the approved authorization redeemed (once), checks the client is
   * unchanged, and creates the grant with its first tokens and its index entry.
   */
  redeemDeviceAuthorization(deviceCodeHash: string, client: OAuthClient, grant: Grant): Promise<TokenWriteOutcome>;
}

/** What POST /api/v1/oauth/device_authorization answers (RFC 8628 section 3.2). */
export interface DeviceAuthorizationResponse {
  deviceCode: string;
  userCode: string;
  expiresIn: number;
  interval: number;
}

/** A fresh user code: 8 letters of the alphabet, without modulo bias. */
export function newUserCode(): string {
  let code = '';
  while (code.length < USER_CODE_LENGTH) {
    for (const byte of randomBytes(16)) {
      // 240 is the largest multiple of 20 below 256: larger bytes are dropped, not folded.
      if (byte < 240 && code.length < USER_CODE_LENGTH) code += USER_CODE_ALPHABET[byte % USER_CODE_ALPHABET.length];
    }
  }
  return code;
}

/** `XXXX-XXXX`, as people read and type it. */
export const formatUserCode = (code: string): string => `${code.slice(0, 4)}-${code.slice(4)}`;

/** A typed code as it was issued: case, dashes and spaces do not matter. `undefined` when it cannot be one. */
export function normalizeUserCode(typed: string): string | undefined {
  const code = typed.toUpperCase().replace(/[\s-]/g, '');
  if (code.length !== USER_CODE_LENGTH) return undefined;
  return [...code].every((character) => USER_CODE_ALPHABET.includes(character)) ? code : undefined;
}

const wrongCode = () => new BadRequestError('That code is not valid. Check it on your device and try again.');

/**
 * The device authorization grant (RFC 8628): the device asks for codes, the person approves on
 * the device page, and the device polls the token endpoint until it gets tokens.
 */
export class DeviceAuthorizationService {
  constructor(
    private readonly store: DeviceAuthorizationStore,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** RFC 8628 section 3.1 to 3.2. Client authentication is as at the token endpoint. */
  async startDeviceAuthorization(credentials: ClientCredentials, parameters: Record<string, string>): Promise<DeviceAuthorizationResponse> {
    const client = await this.clientOf(credentials);
    const scopes = parseScope(parameters.scope);
    if (!scopes) throw invalidScope('scope must be a space-separated subset of containers:read containers:write');
    const app = await this.store.getApp(client.appId);
    if (!app) throw invalidClient(credentials.method);
    const now = this.now();
    for (;;) {
      const deviceCode = newSecret(DEVICE_CODE_PREFIX);
      const userCode = newUserCode();
      const stored = await this.store.putDeviceAuthorization({
        deviceCodeHash: sha256Hex(deviceCode),
        userCodeHash: sha256Hex(userCode),
        clientId: client.clientId,
        appId: app.id,
        app: { name: app.name, description: app.description },
        scopes,
        status: 'pending',
        grantId: newId(now.getTime()),
        intervalSeconds: DEVICE_POLL_INTERVAL_SECONDS,
        expiresAt: isoAfter(now, DEVICE_CODE_LIFETIME_SECONDS),
      });
      // A user code that is still in use elsewhere (one in billions) is drawn again.
      if (stored)
        return {
          deviceCode,
          userCode: formatUserCode(userCode),
          expiresIn: DEVICE_CODE_LIFETIME_SECONDS,
          interval: DEVICE_POLL_INTERVAL_SECONDS,
        };
    }
  }

  /** The authenticated client; the first-party CLI's is created the first time it is asked for. */
  private async clientOf(credentials: ClientCredentials): Promise<OAuthClient> {
    let client = isPlausibleClientId(credentials) ? await this.store.getClient(credentials.clientId) : undefined;
    if (!client && credentials.clientId === FIRST_PARTY_CLI_CLIENT_ID) {
      client = await this.store.provisionClient(firstPartyCliApp(this.now().toISOString()));
    }
    verifyClient(credentials, client);
    return client;
  }

  /**
   * The pending authorization a typed code names, for the page to show. A code that is unknown,
   * expired, already answered or malformed gets the same answer, and counts against the session.
   */
  async pendingForUserCode(principal: Principal, typed: string): Promise<UserCodeEntry & { userCode: string }> {
    const code = normalizeUserCode(typed);
    const entry = code ? await this.store.getUserCode(sha256Hex(code)) : undefined;
    const now = this.now();
    if (code && entry && !hasExpired(entry.expiresAt, now)) {
      const authorization = await this.store.getDeviceAuthorization(entry.deviceCodeHash);
      if (authorization?.status === 'pending') return { ...entry, userCode: formatUserCode(code) };
    }
    return this.wrongCodeTyped(principal);
  }

  /** The person's decision on the device page: the authorization leaves `pending` once, whatever races it. */
  async decide(principal: Principal, typed: string, decision: 'approve' | 'deny'): Promise<void> {
    const code = normalizeUserCode(typed);
    const entry = code ? await this.store.getUserCode(sha256Hex(code)) : undefined;
    const now = this.now();
    if (!entry || hasExpired(entry.expiresAt, now)) return this.wrongCodeTyped(principal);
    const decided = await this.store.decide(
      entry.deviceCodeHash,
      decision === 'approve' ? { status: 'approved', userId: principal.userId, role: principal.role } : { status: 'denied' },
      now.toISOString(),
    );
    if (!decided) return this.wrongCodeTyped(principal);
  }

  private async wrongCodeTyped(principal: Principal): Promise<never> {
    const { allowed, retryAfterSeconds } = await this.store.countWrongUserCode(
      principal.credentialHash,
      this.now(),
      WRONG_USER_CODE_WINDOW_SECONDS,
      WRONG_USER_CODE_LIMIT,
    );
    if (!allowed) throw new RateLimitedError('Too many wrong codes; wait a minute and try again', retryAfterSeconds);
    throw wrongCode();
  }

  /**
   * The token endpoint's device code grant (RFC 8628 section 3.4 to 3.5): pending, slow down,
   * denied, expired, or the tokens, once.
   */
  async redeemDeviceCode(credentials: ClientCredentials, deviceCode: string): Promise<TokenSet> {
    if (!isPlausibleClientId(credentials) || deviceCode.length > MAX_CREDENTIAL_LENGTH) {
      await authenticateClient(this.store, credentials);
      throw invalidGrant('The device code is invalid');
    }
    const deviceCodeHash = sha256Hex(deviceCode);
    const { client, authorization } = await this.store.getClientAndDeviceAuthorization(credentials.clientId, deviceCodeHash);
    verifyClient(credentials, client);
    // RFC 8628 section 3.4: the device code must have been issued to this very client.
    if (!authorization || authorization.clientId !== client.clientId || !constantTimeEqual(deviceCodeHash, authorization.deviceCodeHash)) {
      throw invalidGrant('The device code is invalid');
    }
    const now = this.now();
    if (authorization.status === 'redeemed') throw invalidGrant('The device code was already used');
    if (hasExpired(authorization.expiresAt, now)) throw new OAuthRequestError('expired_token', 'The device code has expired; start again');
    if (authorization.status === 'denied') throw new OAuthRequestError('access_denied', 'The user denied the authorization');
    if (authorization.status === 'pending') {
      const tooSoon =
        authorization.lastPolledAt !== undefined &&
        now.getTime() - Date.parse(authorization.lastPolledAt) + POLL_CLOCK_TOLERANCE_MS < authorization.intervalSeconds * 1000;
      if (tooSoon) {
        const slower = authorization.intervalSeconds + SLOW_DOWN_STEP_SECONDS;
        await this.store.recordPoll(deviceCodeHash, now.toISOString(), slower);
        throw new OAuthRequestError('slow_down', `Polling too fast; wait ${slower} seconds between requests`);
      }
      await this.store.recordPoll(deviceCodeHash, now.toISOString());
      throw new OAuthRequestError('authorization_pending', 'The user has not answered yet');
    }
    return this.issueGrant(authorization, client, credentials, now);
  }

  private async issueGrant(
    authorization: DeviceAuthorization,
    client: OAuthClient,
    credentials: ClientCredentials,
    now: Date,
  ): Promise<TokenSet> {
    const expiresAt = isoAfter(now, GRANT_LIFETIME_SECONDS);
    const refreshToken = newGrantSecret(CREDENTIAL_PREFIX.refreshToken, authorization.grantId);
    const accessToken = newGrantSecret(CREDENTIAL_PREFIX.accessToken, authorization.grantId);
    const accessExpiresAt = earlier(isoAfter(now, ACCESS_TOKEN_LIFETIME_SECONDS), expiresAt);
    const grant: Grant = {
      id: authorization.grantId,
      appId: authorization.appId,
      clientId: authorization.clientId,
      userId: authorization.userId!,
      role: authorization.role!,
      scopes: authorization.scopes,
      status: 'active',
      refreshTokenHash: sha256Hex(refreshToken),
      refreshExpiresAt: earlier(isoAfter(now, REFRESH_TOKEN_LIFETIME_SECONDS), expiresAt),
      accessTokens: [{ tokenHash: sha256Hex(accessToken), expiresAt: accessExpiresAt }],
      createdAt: now.toISOString(),
      expiresAt,
      lastUsedAt: now.toISOString(),
    };
    const outcome = await this.store.redeemDeviceAuthorization(authorization.deviceCodeHash, client, grant);
    if (!outcome.committed) {
      if (outcome.reason === 'client-changed') throw invalidClient(credentials.method);
      throw invalidGrant('The device code was already used');
    }
    return {
      accessToken,
      refreshToken,
      expiresIn: Math.round((Date.parse(accessExpiresAt) - now.getTime()) / 1000),
      scopes: authorization.scopes,
    };
  }
}
