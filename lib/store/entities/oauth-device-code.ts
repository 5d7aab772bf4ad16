import type { OAuthScope, ProtectedResource, Role } from '../../identity/principal.js';
import type {
  DeviceAuthorization,
  DeviceAuthorizationStatus,
  Registrant,
  UserCodeEntry,
  WrongCodeCounter,
} from '../../oauth/device-authorization.js';
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
  /** RFC 8707: the resource the device asked for, when it named one. */
  resource?: ProtectedResource;
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
  /** Absent on entries written before the page showed the registrant. */
  first_party?: boolean;
  registered_by?: string;
  registered_at?: string;
  scopes: OAuthScope[];
  expires_at: string;
}

const registrantAttributes = (registrant: Registrant) =>
  registrant.firstParty
    ? { first_party: true }
    : { first_party: false, registered_at: registrant.registeredAt, ...(registrant.email ? { registered_by: registrant.email } : {}) };

function registrantOf(stored: StoredUserCode): Registrant | undefined {
  if (stored.first_party === undefined) return undefined;
  if (stored.first_party) return { firstParty: true };
  return { firstParty: false, registeredAt: stored.registered_at ?? '', ...(stored.registered_by ? { email: stored.registered_by } : {}) };
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
    resource: authorization.resource,
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
      ...(stored.resource ? { resource: stored.resource } : {}),
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
    ...(authorization.registrant ? registrantAttributes(authorization.registrant) : {}),
    scopes: authorization.scopes,
    expires_at: authorization.expiresAt,
    [TTL_ATTRIBUTE]: ttlEpochSeconds(authorization.expiresAt),
  }),
  fromItem(item: Item): UserCodeEntry {
    const stored = asStored<StoredUserCode>(item);
    const registrant = registrantOf(stored);
    return {
      deviceCodeHash: stored.device_code_hash,
      app: { name: stored.app_name, description: stored.app_description },
      ...(registrant ? { registrant } : {}),
      scopes: stored.scopes,
      expiresAt: stored.expires_at,
    };
  },
};

/** The wrong user codes one session, or one account, typed in the current window. */
interface StoredUserCodeFailures {
  attempts: number;
  window_ends_at: string;
}

export const userCodeFailuresEntity = {
  key: (counter: WrongCodeCounter) =>
    'session' in counter ? keys.userCodeFailures(counter.session) : keys.userCodeFailuresOfAccount(counter.account),
  firstFailureItem: (counter: WrongCodeCounter, windowEndsAt: string): Item => ({
    ...userCodeFailuresEntity.key(counter),
    entity: 'user_code_failures',
    attempts: 1,
    window_ends_at: windowEndsAt,
    [TTL_ATTRIBUTE]: ttlEpochSeconds(windowEndsAt),
  }),
  attemptsOf: (item: Item): number => asStored<Partial<StoredUserCodeFailures>>(item).attempts ?? 0,
  windowEndOf: (item: Item): string | undefined => asStored<Partial<StoredUserCodeFailures>>(item).window_ends_at,
};
