import type { OAuthScope, Role } from '../../identity/principal.js';
import type { DeviceAuthorization, DeviceAuthorizationStatus, UserCodeEntry } from '../../oauth/device-authorization.js';
import { keys, TTL_ATTRIBUTE, ttlEpochSeconds } from '../keys.js';
import { asStored, type Item } from './item.js';

/** A device authorization (RFC 8628) by the hash of its device code (docs/oauth.md, "Records"). */
interface StoredDeviceAuthorization {
  device_code_hash: string;
  user_code_hash: string;
  client_id: string;
  app_id: string;
  app_name: string;
  app_description: string;
  scopes: OAuthScope[];
  status: DeviceAuthorizationStatus;
  user_id?: string;
  role?: Role;
  grant_id: string;
  interval_seconds: number;
  last_polled_at?: string;
  expires_at: string;
}

/** The user code's entry: which device authorization it names and what the page shows. */
interface StoredUserCode {
  device_code_hash: string;
  app_name: string;
  app_description: string;
  scopes: OAuthScope[];
  expires_at: string;
}

export const deviceAuthorizationEntity = {
  key: (deviceCodeHash: string) => keys.deviceAuthorization(deviceCodeHash),
  toItem: (authorization: DeviceAuthorization): Item => ({
    ...keys.deviceAuthorization(authorization.deviceCodeHash),
    entity: 'oauth_device_authorization',
    device_code_hash: authorization.deviceCodeHash,
    user_code_hash: authorization.userCodeHash,
    client_id: authorization.clientId,
    app_id: authorization.appId,
    app_name: authorization.app.name,
    app_description: authorization.app.description,
    scopes: authorization.scopes,
    status: authorization.status,
    user_id: authorization.userId,
    role: authorization.role,
    grant_id: authorization.grantId,
    interval_seconds: authorization.intervalSeconds,
    last_polled_at: authorization.lastPolledAt,
    expires_at: authorization.expiresAt,
    [TTL_ATTRIBUTE]: ttlEpochSeconds(authorization.expiresAt),
  }),
  fromItem(item: Item): DeviceAuthorization {
    const stored = asStored<StoredDeviceAuthorization>(item);
    return {
      deviceCodeHash: stored.device_code_hash,
      userCodeHash: stored.user_code_hash,
      clientId: stored.client_id,
      appId: stored.app_id,
      app: { name: stored.app_name, description: stored.app_description },
      scopes: stored.scopes,
      status: stored.status,
      ...(stored.user_id ? { userId: stored.user_id } : {}),
      ...(stored.role ? { role: stored.role } : {}),
      grantId: stored.grant_id,
      intervalSeconds: stored.interval_seconds,
      ...(stored.last_polled_at ? { lastPolledAt: stored.last_polled_at } : {}),
      expiresAt: stored.expires_at,
    };
  },
  /** The stored attributes the store's updates name. */
  attribute: {
    status: 'status',
    userId: 'user_id',
    role: 'role',
    intervalSeconds: 'interval_seconds',
    lastPolledAt: 'last_polled_at',
    expiresAt: 'expires_at',
  },
};

export const userCodeEntity = {
  key: (userCodeHash: string) => keys.userCode(userCodeHash),
  toItem: (authorization: DeviceAuthorization): Item => ({
    ...keys.userCode(authorization.userCodeHash),
    entity: 'oauth_user_code',
    device_code_hash: authorization.deviceCodeHash,
    app_name: authorization.app.name,
    app_description: authorization.app.description,
    scopes: authorization.scopes,
    expires_at: authorization.expiresAt,
    [TTL_ATTRIBUTE]: ttlEpochSeconds(authorization.expiresAt),
  }),
  fromItem(item: Item): UserCodeEntry {
    const stored = asStored<StoredUserCode>(item);
    return {
      deviceCodeHash: stored.device_code_hash,
      app: { name: stored.app_name, description: stored.app_description },
      scopes: stored.scopes,
      expiresAt: stored.expires_at,
    };
  },
};

/** The wrong user codes one session typed in the current window. */
interface StoredUserCodeFailures {
  attempts: number;
  window_ends_at: string;
}

export const userCodeFailuresEntity = {
  key: (sessionHash: string) => keys.userCodeFailures(sessionHash),
  firstFailureItem: (sessionHash: string, windowEndsAt: string): Item => ({
    ...keys.userCodeFailures(sessionHash),
    entity: 'user_code_failures',
    attempts: 1,
    window_ends_at: windowEndsAt,
    [TTL_ATTRIBUTE]: ttlEpochSeconds(windowEndsAt),
  }),
  windowEndOf: (item: Item): string | undefined => asStored<Partial<StoredUserCodeFailures>>(item).window_ends_at,
};
