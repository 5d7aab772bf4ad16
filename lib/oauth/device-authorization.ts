import { randomBytes } from 'node:crypto';
import { BadRequestError, invalidScope, OAuthRequestError, RateLimitedError } from '../errors.js';
import type { OAuthScope, Principal, ProtectedResource, Role } from '../identity/principal.js';
import { newSecret, sha256Hex } from '../identity/secrets.js';
import { newId } from '../ids.js';
import { type ClientCredentials, invalidClient, isPlausibleClientId, verifyClient } from './client-authentication.js';
import { hasExpired, isoAfter } from './lifetimes.js';
import { FIRST_PARTY_CLI_CLIENT_ID, firstPartyCliApp } from './first-party-client.js';
import type { AppSummary, OAuthApp, OAuthClient } from './oauth-store.js';
import { targetResource } from './resources.js';
import { parseScope } from './scopes.js';

/** RFC 8628 section 3.4: the grant type a device polls the token endpoint with. */
export const DEVICE_CODE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

/** A device code: this prefix and 256 random bits, stored only as its hash. */
const DEVICE_CODE_PREFIX = 'svdc_';

/** How long a device authorization waits for the user (RFC 8628 section 3.2 `expires_in`). */
export const DEVICE_CODE_LIFETIME_SECONDS = 600;
/** The poll interval a device starts with (RFC 8628 section 3.2). */
export const DEVICE_POLL_INTERVAL_SECONDS = 5;

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
/** Wrong codes an account may type across all its sessions in one window (signing in again gives no fresh guesses). */
export const ACCOUNT_WRONG_USER_CODE_LIMIT = 8;
export const ACCOUNT_WRONG_USER_CODE_WINDOW_SECONDS = 600;

/** Whose wrong codes a counter counts: one session's (by its credential hash) or one account's. */
export type WrongCodeCounter = { session: string } | { account: string };

export interface WrongCodeLimit {
  counter: WrongCodeCounter;
  windowSeconds: number;
  limit: number;
}

const wrongCodeLimitsOf = (principal: Principal): WrongCodeLimit[] => [
  { counter: { session: principal.credentialHash }, windowSeconds: WRONG_USER_CODE_WINDOW_SECONDS, limit: WRONG_USER_CODE_LIMIT },
  { counter: { account: principal.userId }, windowSeconds: ACCOUNT_WRONG_USER_CODE_WINDOW_SECONDS, limit: ACCOUNT_WRONG_USER_CODE_LIMIT },
];

/**
 * Who registered the application the device asks for, as the device page shows it (RFC 8628
 * section 5.4: the person must be able to tell this service's own CLI from a look-alike).
 */
export type Registrant = { firstParty: true } | { firstParty: false; email?: string; registeredAt: string };

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
  /** The resource the device asked for (RFC 8707); its grant keeps it. */
  resource?: ProtectedResource;
  status: DeviceAuthorizationStatus;
  /** Set by the approval: whose grant the device gets. */
  userId?: string;
  role?: Role;
  /** Chosen when the device asks, so the grant's id is known before it exists. */
  grantId: string;
  /** Who registered the application, for the page (kept with the user code only). */
  registrant?: Registrant;
  intervalSeconds: number;
  lastPolledAt?: string;
  expiresAt: string;
}

/** What the device page needs of a user code: which device authorization it names, and what it shows. */
export interface UserCodeEntry {
  deviceCodeHash: string;
  app: AppSummary;
  /** Absent on entries written before the page showed it. */
  registrant?: Registrant;
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
  /** The email of the account that registered an application. */
  getUserEmail(userId: string): Promise<string | undefined>;
  /**
   * Counts one wrong code, atomically: false when the counter already holds `limit` in the
   * current window, with the seconds until the window ends.
   */
  countWrongUserCode(limit: WrongCodeLimit, now: Date): Promise<{ allowed: boolean; retryAfterSeconds: number }>;
  /** Seconds until every counter is under its limit again; 0 when all are (read side by side). */
  wrongUserCodeWait(limits: readonly WrongCodeLimit[], now: Date): Promise<number>;
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
const tooManyWrongCodes = (retryAfterSeconds: number) =>
  new RateLimitedError('Too many wrong codes; wait a few minutes and try again', retryAfterSeconds);

/**
 * The device authorization grant (RFC 8628): the device asks for codes, the person approves on
 * the device page, and the device polls the token endpoint until it gets tokens.
 */
export class DeviceAuthorizationService {
  constructor(
    private readonly store: DeviceAuthorizationStore,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * RFC 8628 section 3.1 to 3.2, with `resource` (RFC 8707 section 2) one served under `issuer`.
   * Client authentication is as at the token endpoint.
   */
  async startDeviceAuthorization(
    credentials: ClientCredentials,
    parameters: Record<string, string>,
    issuer?: string,
  ): Promise<DeviceAuthorizationResponse> {
    const client = await this.clientOf(credentials);
    const scopes = parseScope(parameters.scope);
    if (!scopes) throw invalidScope('scope must be a space-separated subset of containers:read containers:write');
    const resource = targetResource(parameters.resource, issuer);
    if (resource instanceof OAuthRequestError) throw resource;
    const app = await this.store.getApp(client.appId);
    if (!app) throw invalidClient(credentials.method);
    const registrant = await this.registrantOf(app);
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
        ...(resource ? { resource } : {}),
        status: 'pending',
        grantId: newId(now.getTime()),
        registrant,
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

  private async registrantOf(app: OAuthApp): Promise<Registrant> {
    if (app.clientId === FIRST_PARTY_CLI_CLIENT_ID) return { firstParty: true };
    const email = await this.store.getUserEmail(app.ownerId);
    return { firstParty: false, registeredAt: app.createdAt, ...(email ? { email } : {}) };
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
    const entry = await this.unlessLimited(principal, code);
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
    const entry = await this.unlessLimited(principal, code);
    const now = this.now();
    if (!entry || hasExpired(entry.expiresAt, now)) return this.wrongCodeTyped(principal);
    const decided = await this.store.decide(
      entry.deviceCodeHash,
      decision === 'approve' ? { status: 'approved', userId: principal.userId, role: principal.role } : { status: 'denied' },
      now.toISOString(),
    );
    if (!decided) return this.wrongCodeTyped(principal);
  }

  /**
   * The entry a code names, read beside the session's and the account's wrong-code counts: while
   * either is at its limit every code is refused alike, the right one too, so a guesser learns
   * nothing from the answer.
   */
  private async unlessLimited(principal: Principal, code: string | undefined): Promise<UserCodeEntry | undefined> {
    const [entry, waitSeconds] = await Promise.all([
      code ? this.store.getUserCode(sha256Hex(code)) : undefined,
      this.store.wrongUserCodeWait(wrongCodeLimitsOf(principal), this.now()),
    ]);
    if (waitSeconds > 0) throw tooManyWrongCodes(waitSeconds);
    return entry;
  }

  /** Counts a wrong code against the session and the account, side by side. */
  private async wrongCodeTyped(principal: Principal): Promise<never> {
    const now = this.now();
    const counted = await Promise.all(wrongCodeLimitsOf(principal).map((limit) => this.store.countWrongUserCode(limit, now)));
    const refused = counted.filter((outcome) => !outcome.allowed);
    if (refused.length > 0) throw tooManyWrongCodes(Math.max(...refused.map((outcome) => outcome.retryAfterSeconds)));
    throw wrongCode();
  }
}
