import type { Page, PageRequest } from '../store/pagination.js';
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

export interface LoginFailures {
  count: number;
  windowEndsAt: string;
  lockedUntil?: string;
}

/** Persistence for users, credentials and login throttling. */
export interface IdentityStore {
  /** Fails with `ConflictError` when the email is taken. */
  createUser(user: UserWithPassword): Promise<void>;
  getUser(userId: string): Promise<User | undefined>;
  findUserByEmail(email: string): Promise<UserWithPassword | undefined>;
  listUsers(page: PageRequest): Promise<Page<User>>;

  putCredential(credential: CredentialRecord): Promise<void>;
  getCredential(tokenHash: string): Promise<CredentialRecord | undefined>;
  deleteCredential(tokenHash: string): Promise<void>;

  /** Writes the token's metadata and its credential together. */
  createPersonalAccessToken(token: PersonalAccessToken, credential: CredentialRecord): Promise<void>;
  listPersonalAccessTokens(userId: string, page: PageRequest): Promise<Page<PersonalAccessToken>>;
  /** False when the token does not exist (or belongs to someone else). */
  deletePersonalAccessToken(userId: string, tokenId: string): Promise<boolean>;
  recordPersonalAccessTokenUse(credential: CredentialRecord, usedAt: string): Promise<void>;

  getLoginFailures(email: string): Promise<LoginFailures | undefined>;
  /** Counts one failure in the current window (starting one when none is open) and returns the count. */
  recordLoginFailure(email: string, now: Date, window: number): Promise<LoginFailures>;
  lockLogin(email: string, until: Date): Promise<void>;
  clearLoginFailures(email: string): Promise<void>;
}
