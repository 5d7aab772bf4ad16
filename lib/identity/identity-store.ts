import type { Page, PageRequest } from '../page.js';
import type { CredentialKind, OAuthScope, Role } from './principal.js';

export interface User {
  id: string;
  email: string;
  role: Role;
  createdAt: string;
}

export interface UserWithPassword extends User {
  passwordHash: string;
}

/** Any bearer credential as stored: only its hash, never the token. */
export interface CredentialRecord {
  tokenHash: string;
  kind: CredentialKind;
  userId: string;
  role: Role;
  scopes: readonly OAuthScope[];
  expiresAt: string;
  /** PATs: the token's id, for its metadata item. */
  tokenId?: string;
  lastUsedAt?: string;
  /** OAuth access tokens. */
  clientId?: string;
  appId?: string;
  grantId?: string;
}

export interface PersonalAccessToken {
  id: string;
  userId: string;
  name: string;
  tokenHash: string;
  createdAt: string;
  expiresAt: string;
  lastUsedAt: string | null;
}

/** Whether a sign-in for an email may check its password now. */
export type LoginAttempt =
  | { allowed: true /** This attempt's number within the window, counting it. */; attempt: number }
  | { allowed: false; retryAfterSeconds: number };

/**
 * What an OAuth access token's use needs of its grant (docs/oauth.md): the grant holds the
 * hashes of its live access tokens, so one read of it authenticates the token.
 */
export interface GrantState {
  id: string;
  active: boolean;
  expiresAt: string;
  userId: string;
  role: Role;
  clientId: string;
  appId: string;
  scopes: readonly OAuthScope[];
  /** Current first; each with its expiry and, when narrower than the grant's, its scopes. */
  accessTokens: ReadonlyArray<{ tokenHash: string; expiresAt: string; scopes?: readonly OAuthScope[] }>;
}

/** What authenticating a presented credential reads, and the one stamp it writes. */
export interface CredentialStore {
  getCredential(tokenHash: string): Promise<CredentialRecord | undefined>;
  /** One read: the grant an OAuth access token names, with the hashes of its live access tokens. */
  getGrantState(grantId: string): Promise<GrantState | undefined>;
  recordPersonalAccessTokenUse(credential: CredentialRecord, usedAt: string): Promise<void>;
}

/** Persistence for users, credentials and login throttling. */
export interface IdentityStore extends CredentialStore {
  /** Fails with `ConflictError` when the email is taken. */
  createUser(user: UserWithPassword): Promise<void>;
  getUser(userId: string): Promise<User | undefined>;
  findUserByEmail(email: string): Promise<UserWithPassword | undefined>;
  listUsers(page: PageRequest): Promise<Page<User>>;

  putCredential(credential: CredentialRecord): Promise<void>;
  deleteCredential(tokenHash: string): Promise<void>;

  /** Writes the token's metadata and its credential together. */
  createPersonalAccessToken(token: PersonalAccessToken, credential: CredentialRecord): Promise<void>;
  listPersonalAccessTokens(userId: string, page: PageRequest): Promise<Page<PersonalAccessToken>>;
  /** False when the token does not exist (or belongs to someone else). */
  deletePersonalAccessToken(userId: string, tokenId: string): Promise<boolean>;

  /**
   * Counts an attempt against the email before its password is checked, atomically, so
   * that parallel guesses cannot all get past the limit. Refused once `limit` attempts fall
   * in the window; a window starts at the first attempt and lasts `windowSeconds`.
   */
  reserveLoginAttempt(email: string, now: Date, windowSeconds: number, limit: number): Promise<LoginAttempt>;
  /** Refuses further attempts until `until`. */
  lockLogin(email: string, until: Date, limit: number): Promise<void>;
  /** Forgets the email's attempts after a successful sign-in. */
  clearLoginAttempts(email: string): Promise<void>;
}
