/**
 * Every key of the single table is built here, from named parts. Items use the generic
 * attributes `pk`/`sk`, plus `gsi1pk`/`gsi1sk` (a caller's own things, newest first) and
 * `gsi2pk`/`gsi2sk` (service-wide listings for admins). Ids are UUIDv7, so sorting a sort
 * key that ends in an id sorts by creation time.
 */

export interface ItemKey {
  pk: string;
  sk: string;
}

export interface OwnerIndexKey {
  gsi1pk: string;
  gsi1sk: string;
}

export interface GlobalIndexKey {
  gsi2pk: string;
  gsi2sk: string;
}

export const INDEX = {
  byOwner: 'gsi1',
  global: 'gsi2',
} as const;

/** Attribute DynamoDB's TTL reads (epoch seconds). Readers still check expiry themselves. */
export const TTL_ATTRIBUTE = 'expires_at_epoch';

/** The TTL attribute's value for an ISO 8601 expiry. */
export const ttlEpochSeconds = (iso: string): number => Math.floor(Date.parse(iso) / 1000);

/**
 * Whether an item's TTL has passed: DynamoDB deletes such items only within days, and DynamoDB
 * Local never, so a reader treats them as gone
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/howitworks-ttl.html).
 */
export function isPastTtl(item: Record<string, unknown>, now: Date = new Date()): boolean {
  const ttl = item[TTL_ATTRIBUTE];
  return typeof ttl === 'number' && ttl * 1000 <= now.getTime();
}

const join = (...parts: string[]): string => parts.join('#');

const RECONCILE_CHECKPOINT: ItemKey = { pk: 'RECONCILER', sk: 'CHECKPOINT' };

export const keys = {
  user: (userId: string): ItemKey => ({ pk: join('USER', userId), sk: 'PROFILE' }),
  allUsers: (userId: string): GlobalIndexKey => ({ gsi2pk: 'USERS', gsi2sk: join('USER', userId) }),
  allUsersPartition: 'USERS',

  /** Claims an email address; written in the same transaction as the user. */
  email: (normalizedEmail: string): ItemKey => ({ pk: join('EMAIL', normalizedEmail), sk: 'EMAIL' }),
  /** An email's failed sign-ins from every address: the slow-down (docs/api-rules.md, "Sign-in throttling"). */
  loginFailures: (normalizedEmail: string): ItemKey => ({
    pk: join('LOGIN_FAILURES', normalizedEmail),
    sk: 'LOGIN_FAILURES',
  }),
  /** An email's sign-in attempts from one client address: the lock. Same partition, so the same IAM grant. */
  loginFailuresFromAddress: (normalizedEmail: string, address: string): ItemKey => ({
    pk: join('LOGIN_FAILURES', normalizedEmail),
    sk: join('ADDRESS', address),
  }),
  /** An email's sign-in attempts from one device that signed in as it before (its device cookie): that device's own limit. */
  loginFailuresFromDevice: (normalizedEmail: string, deviceId: string): ItemKey => ({
    pk: join('LOGIN_FAILURES', normalizedEmail),
    sk: join('DEVICE', deviceId),
  }),

  /** Any bearer credential (session, PAT, OAuth access token), found by its SHA-256 hash. */
  credential: (tokenHash: string): ItemKey => ({ pk: join('CREDENTIAL', tokenHash), sk: 'CREDENTIAL' }),

  personalAccessToken: (userId: string, tokenId: string): ItemKey => ({
    pk: join('USER', userId),
    sk: join('PAT', tokenId),
  }),
  personalAccessTokenPrefix: 'PAT#',
  /** A session's entry under its user, so that a password change or a disable can end every session. */
  sessionOfUser: (userId: string, tokenHash: string): ItemKey => ({ pk: join('USER', userId), sk: join('SESSION', tokenHash) }),
  sessionOfUserPrefix: 'SESSION#',

  /** A user's quota use (containers, running vCPU), charged in the same transaction as each container write. */
  quotaUsage: (userId: string): ItemKey => ({ pk: join('USER', userId), sk: 'QUOTA' }),

  container: (containerId: string): ItemKey => ({ pk: join('CONTAINER', containerId), sk: 'CONTAINER' }),
  /** A user's containers, newest first. */
  containerOfOwner: (userId: string, containerId: string): OwnerIndexKey => ({
    gsi1pk: join('OWNER', userId, 'CONTAINER'),
    gsi1sk: join('CONTAINER', containerId),
  }),
  containersOfOwnerPartition: (userId: string): string => join('OWNER', userId, 'CONTAINER'),
  /**
   * Every container in one index partition, for the admin listing. One partition serves
   * about 3,000 reads and 1,000 writes a second; past that, shard it (CONTAINERS#0..n) and
   * merge the pages.
   */
  allContainers: (containerId: string): GlobalIndexKey => ({ gsi2pk: 'CONTAINERS', gsi2sk: join('CONTAINER', containerId) }),
  allContainersPartition: 'CONTAINERS',
  /**
   * A container's numbered releases, in its own partition (the same grant as the container): the
   * version zero-padded, so the partition's sort order is the release order.
   */
  release: (containerId: string, version: number): ItemKey => ({
    pk: join('CONTAINER', containerId),
    sk: join('RELEASE', String(version).padStart(10, '0')),
  }),
  releasePrefix: 'RELEASE#',
  /** A container's deploys, newest first by their UUIDv7 ids, in its own partition too. */
  deploy: (containerId: string, deployId: string): ItemKey => ({ pk: join('CONTAINER', containerId), sk: join('DEPLOY', deployId) }),
  deployPrefix: 'DEPLOY#',
  containerPartition: (containerId: string): string => join('CONTAINER', containerId),
  /** The builds an account runs at once (QUOTA_MAX_CONCURRENT_BUILDS): one item per account, a slot per build. */
  buildSlots: (userId: string): ItemKey => ({ pk: join('BUILD_SLOTS', userId), sk: 'BUILD_SLOTS' }),
  /** Where the reconciler's walks over tasks and containers stopped, so the next run goes on from there. */
  reconcileCheckpoint: RECONCILE_CHECKPOINT,
  /** What was published in the private zone for one task (lib/dns-routes/app-routes.ts), until it is withdrawn. */
  appRoute: (taskId: string): ItemKey => ({ pk: join('ROUTE', taskId), sk: 'ROUTE' }),
  /** The requests the wake endpoint holds for one container's wake (lib/store/dynamo-wake-holds.ts). */
  wakeHolds: (containerId: string): ItemKey => ({ pk: join('WAKE_HOLDS', containerId), sk: 'WAKE_HOLDS' }),
  /** The requests it holds for every wake at once. Same partition family, so the same IAM grant. */
  allWakeHolds: { pk: join('WAKE_HOLDS', 'ALL'), sk: 'WAKE_HOLDS' } satisfies ItemKey,
  /** A volume (lib/volumes/volume.ts). */
  volume: (volumeId: string): ItemKey => ({ pk: join('VOLUME', volumeId), sk: 'VOLUME' }),
  /** A snapshot of a volume: its own item, as it outlives the volume and a new volume is made from it by its id alone. */
  snapshot: (snapshotId: string): ItemKey => ({ pk: join('SNAPSHOT', snapshotId), sk: 'SNAPSHOT' }),
  /** A volume's snapshots, newest first (the owner index: its partition names the volume). */
  snapshotOfVolume: (volumeId: string, snapshotId: string): OwnerIndexKey => ({
    gsi1pk: join('VOLUME', volumeId, 'SNAPSHOT'),
    gsi1sk: join('SNAPSHOT', snapshotId),
  }),
  snapshotsOfVolumePartition: (volumeId: string): string => join('VOLUME', volumeId, 'SNAPSHOT'),
  /** A user's volumes, newest first. */
  volumeOfOwner: (userId: string, volumeId: string): OwnerIndexKey => ({
    gsi1pk: join('OWNER', userId, 'VOLUME'),
    gsi1sk: join('VOLUME', volumeId),
  }),
  volumesOfOwnerPartition: (userId: string): string => join('OWNER', userId, 'VOLUME'),
  allVolumes: (volumeId: string): GlobalIndexKey => ({ gsi2pk: 'VOLUMES', gsi2sk: join('VOLUME', volumeId) }),
  allVolumesPartition: 'VOLUMES',
  /** Claims a hostname service-wide; written in the same transaction as the container. */
  hostname: (hostname: string): ItemKey => ({ pk: join('HOSTNAME', hostname), sk: 'HOSTNAME' }),

  /**
   * An OAuth application. Its partition also indexes the application's grants and codes, so
   * deleting it is one consistent Query of the main table (a GSI could miss a fresh grant).
   */
  oauthApp: (appId: string): ItemKey => ({ pk: join('OAUTH_APP', appId), sk: 'OAUTH_APP' }),
  oauthAppPartition: (appId: string): string => join('OAUTH_APP', appId),
  /** A user's OAuth applications, newest first. */
  oauthAppOfOwner: (userId: string, appId: string): OwnerIndexKey => ({
    gsi1pk: join('OWNER', userId, 'OAUTH_APP'),
    gsi1sk: join('OAUTH_APP', appId),
  }),
  oauthAppsOfOwnerPartition: (userId: string): string => join('OWNER', userId, 'OAUTH_APP'),
  /** The token endpoint's lookup by `client_id`: the application's id and secret hash. */
  oauthClient: (clientId: string): ItemKey => ({ pk: join('OAUTH_CLIENT', clientId), sk: 'OAUTH_CLIENT' }),
  /** The dynamic registrations (RFC 7591) one client address made in one window: the rate limit. */
  registrationsFromAddress: (addressHash: string, windowStart: number): ItemKey => ({
    pk: join('OAUTH_REGISTRATIONS', addressHash),
    sk: join('WINDOW', String(windowStart)),
  }),
  /** A pending authorize request, waiting for consent. */
  authorizationRequest: (requestId: string): ItemKey => ({ pk: join('OAUTH_REQUEST', requestId), sk: 'OAUTH_REQUEST' }),
  authorizationCode: (codeHash: string): ItemKey => ({ pk: join('OAUTH_CODE', codeHash), sk: 'OAUTH_CODE' }),
  appAuthorizationCode: (appId: string, codeHash: string): ItemKey => ({
    pk: join('OAUTH_APP', appId),
    sk: join('OAUTH_CODE', codeHash),
  }),
  appAuthorizationCodePrefix: 'OAUTH_CODE#',
  /**
   * The application's index of its grants (one entry per grant, written with the grant), so
   * deleting the application finds every grant with one consistent Query of the main table.
   */
  appGrant: (appId: string, grantId: string): ItemKey => ({ pk: join('OAUTH_APP', appId), sk: join('OAUTH_GRANT', grantId) }),
  appGrantPrefix: 'OAUTH_GRANT#',
  /**
   * A user's grants (the applications they authorized), newest first, in the owner index. The
   * grant's index entry above carries these attributes, never the grant itself: every refresh
   * updates the grant, and an index key on it would add an index write to each refresh
   * (docs/oauth.md, "What each operation costs"). Revoking from the list removes them.
   */
  grantOfUser: (userId: string, grantId: string): OwnerIndexKey => ({
    gsi1pk: join('OWNER', userId, 'OAUTH_GRANT'),
    gsi1sk: join('OAUTH_GRANT', grantId),
  }),
  grantsOfUserPartition: (userId: string): string => join('OWNER', userId, 'OAUTH_GRANT'),
  /**
   * One user's authorization of one application: its status, the hash of its one current
   * refresh token and those of its live access tokens. Every refresh and every use of its access
   * tokens reads it (docs/oauth.md).
   */
  grant: (grantId: string): ItemKey => ({ pk: join('OAUTH_GRANT', grantId), sk: 'OAUTH_GRANT' }),
  /** A device authorization (RFC 8628) by the hash of its device code: what the device polls. */
  deviceAuthorization: (deviceCodeHash: string): ItemKey => ({ pk: join('OAUTH_DEVICE', deviceCodeHash), sk: 'OAUTH_DEVICE' }),
  /** The same authorization by the hash of its user code: what the device page reads. */
  userCode: (userCodeHash: string): ItemKey => ({ pk: join('OAUTH_USER_CODE', userCodeHash), sk: 'OAUTH_USER_CODE' }),
  /** Wrong user codes typed by one session in the current window (docs/oauth.md, "Device authorization"). */
  userCodeFailures: (sessionHash: string): ItemKey => ({ pk: join('USER_CODE_FAILURES', sessionHash), sk: 'USER_CODE_FAILURES' }),
  /** The same count for one account, across its sessions. Same partition family, so the same IAM grant. */
  userCodeFailuresOfAccount: (userId: string): ItemKey => ({
    pk: join('USER_CODE_FAILURES', 'USER', userId),
    sk: 'USER_CODE_FAILURES',
  }),
} as const;
