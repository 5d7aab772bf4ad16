import { invalidGrant, invalidRequest, OAuthRequestError } from '../../errors.js';
import type { ProtectedResource } from '../../identity/principal.js';
import { CREDENTIAL_PREFIX, constantTimeEqual, MAX_CREDENTIAL_LENGTH, newGrantSecret, sha256Hex } from '../../identity/secrets.js';
import { authenticateClient, type ClientCredentials, invalidClient, isPlausibleClientId, verifyClient } from '../client-authentication.js';
import { DEVICE_CODE_GRANT_TYPE, type DeviceAuthorization } from '../device-authorization.js';
import {
  ACCESS_TOKEN_LIFETIME_SECONDS,
  earlier,
  GRANT_LIFETIME_SECONDS,
  hasExpired,
  isoAfter,
  REFRESH_TOKEN_LIFETIME_SECONDS,
} from '../lifetimes.js';
import type { Grant, OAuthClient, TokenWriteOutcome } from '../oauth-store.js';
import { boundResource, targetResource } from '../resources.js';
import { type TokenGrant, type TokenSet, wellFormed } from './grant.js';

/** Clocks of two function instances may differ a little; a poll this much early still counts as on time. */
const POLL_CLOCK_TOLERANCE_MS = 250;
/** What each `slow_down` adds to the interval (RFC 8628 section 3.5). */
const SLOW_DOWN_STEP_SECONDS = 5;

/** The token endpoint's view of device authorizations; apart from the device page's, so its bundle stays small. */
export interface DeviceCodeGrantStore {
  getClient(clientId: string): Promise<OAuthClient | undefined>;
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

/** RFC 8628 section 3.4: `device_code` is required; `resource` (RFC 8707 section 2.2) one served under `issuer`. */
export function parseDeviceCodeRequest(
  parameters: Record<string, string>,
  issuer?: string,
): { deviceCode: string; resource?: ProtectedResource } | OAuthRequestError {
  const deviceCode = parameters.device_code;
  if (deviceCode === undefined) return invalidRequest('device_code is required');
  const resource = targetResource(parameters.resource, issuer);
  if (resource instanceof OAuthRequestError) return resource;
  return { deviceCode, ...(resource ? { resource } : {}) };
}

/**
 * The device code grant at the token endpoint (RFC 8628 section 3.4 to 3.5): pending, slow
 * down, denied, expired, or the tokens, once. Its store is apart from the device page's, so
 * the token function's bundle stays small.
 */
export class DeviceCodeGrant implements TokenGrant {
  readonly grantType = DEVICE_CODE_GRANT_TYPE;
  readonly name = 'device_code';
  private readonly store: DeviceCodeGrantStore;
  private readonly now: () => Date;

  constructor({ deviceCodes, now = () => new Date() }: { deviceCodes: DeviceCodeGrantStore; now?: () => Date }) {
    this.store = deviceCodes;
    this.now = now;
  }

  async issue(credentials: ClientCredentials, parameters: Record<string, string>, issuer?: string): Promise<TokenSet> {
    const { deviceCode, resource: asked } = await wellFormed(
      this.store,
      credentials,
      parseDeviceCodeRequest(parameters, issuer),
      this.now(),
    );
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
    const resource = boundResource(asked, authorization.resource);
    if (resource instanceof OAuthRequestError) throw resource;
    return this.issueGrant(authorization, client, credentials, now, resource);
  }

  private async issueGrant(
    authorization: DeviceAuthorization,
    client: OAuthClient,
    credentials: ClientCredentials,
    now: Date,
    resource: ProtectedResource | undefined,
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
      ...(authorization.resource ? { resource: authorization.resource } : {}),
      status: 'active',
      refreshTokenHash: sha256Hex(refreshToken),
      refreshExpiresAt: earlier(isoAfter(now, REFRESH_TOKEN_LIFETIME_SECONDS), expiresAt),
      accessTokens: [
        {
          tokenHash: sha256Hex(accessToken),
          expiresAt: accessExpiresAt,
          ...(resource && resource !== authorization.resource ? { resource } : {}),
        },
      ],
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
