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

const join = (...parts: string[]): string => parts.join('#');

export const keys = {
  user: (userId: string): ItemKey => ({ pk: join('USER', userId), sk: 'PROFILE' }),
  allUsers: (userId: string): GlobalIndexKey => ({ gsi2pk: 'USERS', gsi2sk: join('USER', userId) }),
  allUsersPartition: 'USERS',

  /** Claims an email address; written in the same transaction as the user. */
  email: (normalizedEmail: string): ItemKey => ({ pk: join('EMAIL', normalizedEmail), sk: 'EMAIL' }),
  loginFailures: (normalizedEmail: string): ItemKey => ({
    pk: join('LOGIN_FAILURES', normalizedEmail),
    sk: 'LOGIN_FAILURES',
  }),

  /** Any bearer credential (session, PAT, OAuth access token), found by its SHA-256 hash. */
  credential: (tokenHash: string): ItemKey => ({ pk: join('CREDENTIAL', tokenHash), sk: 'CREDENTIAL' }),

  personalAccessToken: (userId: string, tokenId: string): ItemKey => ({
    pk: join('USER', userId),
    sk: join('PAT', tokenId),
  }),
  personalAccessTokenPrefix: 'PAT#',
} as const;
