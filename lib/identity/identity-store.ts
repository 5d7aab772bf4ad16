import type { Page, PageRequest } from '../page.js';
import type { CredentialKind, OAuthScope, PersonalAccessTokenScope, ProtectedResource, Role } from './principal.js';

/** `disabled`: no sign-in, and none of the account's sessions, tokens or authorizations work. */
export type UserStatus = 'active' | 'disabled';

export interface User {
  id: string;
  email: string;
  role: Role;
  createdAt: string;
  status: UserStatus;
  /** Set by an admin's reset: the next sign-in must choose a new password. */
  mustChangePassword: boolean;
}

export interface UserWithPassword extends User {
  passwordHash: string;
}

/** A session as its user's partition indexes it, so that the account can end all its sessions. */
export interface SessionOfUser {
  tokenHash: string;
  expiresAt: string;
}

/** Any bearer credential as stored: only its hash, never the token. */
export interface CredentialRecord {
  tokenHash: string;
  kind: CredentialKind;
  userId: string;
  role: Role;
  scopes: readonly PersonalAccessTokenScope[];
  expiresAt: string;
  /** PATs: the token's id, for its metadata item. */
  tokenId?: string;
  /** PATs: the ids from the root token down to this one, each followed by `/` (`root/child/`). */
  lineage?: string;
  lastUsedAt?: string;
  /** OAuth access tokens. */
  clientId?: string;
  /** OAuth access tokens minted with `resource` (RFC 8707). */
  resource?: ProtectedResource;
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
  scopes: readonly PersonalAccessTokenScope[];
  /** The PAT that created this one; null when a session did. */
  parentId: string | null;
  /** `root/…/own-id/`: a token's descendants are the tokens whose lineage starts with its own. */
  lineage: string;
}

/**
 * Where sign-in attempts for an email are counted: the client's address, or, for a device that
 * signed in as that email before (its device cookie, lib/identity/device-cookie.ts), the device.
 */
export type LoginSource = { address: string } | { device: string };

/** Whether a sign-in for an email from one address (or known device) may check its password now. */
export type LoginAttempt =
  | { allowed: true /** This attempt's number within the window, counting it. */; attempt: number }
  | { allowed: false; retryAfterSeconds: number };

/** The failed sign-ins for one email from every address in the current window (the slow-down). */
export interface EmailFailures {
  failures: number;
  windowEndsAt: string;
  /** While slowed down, no attempt for the email before this time. */
  nextAttemptAt?: string;
}

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
  /** The resource the grant was given for (RFC 8707); absent when asked without one. */
  resource?: ProtectedResource;
  /** Current first; each with its expiry and, when narrower than the grant's, its scopes and the resource it is bound to. */
  accessTokens: ReadonlyArray<{ tokenHash: string; expiresAt: string; scopes?: readonly OAuthScope[]; resource?: ProtectedResource }>;
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

  /**
   * Stores a session with its entry in the user's partition, together, unless the account is
   * disabled (then false): a sign-in racing a disable either is seen by it or fails.
   */
  createSession(credential: CredentialRecord, email: string): Promise<boolean>;
  /** The account's sessions, read consistently from its partition. */
  listSessionsOfUser(userId: string): Promise<SessionOfUser[]>;
  /** Deletes sessions and their entries (already gone ones are no error). */
  deleteSessions(userId: string, sessions: readonly SessionOfUser[]): Promise<void>;

  /**
   * Sets a new password hash and whether the next sign-in must change it; with `previousHash`,
   * only when the hash is still that one (false otherwise). False when the account is gone.
   */
  setPassword(user: Pick<User, 'id' | 'email'>, newHash: string, mustChange: boolean, previousHash?: string): Promise<boolean>;
  /** Sets the account's status on the profile and the email claim together; false when it does not exist. */
  setUserStatus(user: Pick<User, 'id' | 'email'>, status: UserStatus): Promise<boolean>;
  /** Removes the credentials of the account's PATs (their metadata stays, so they can come back). */
  suspendPersonalAccessTokens(userId: string): Promise<void>;
  /** Writes again the credentials of the account's live PATs, from their metadata. */
  restorePersonalAccessTokens(userId: string, role: Role): Promise<void>;

  /** Replaces a password hash, unless it changed meanwhile (then nothing happens). */
  replacePasswordHash(email: string, previousHash: string, newHash: string): Promise<void>;

  /**
   * Writes the token's metadata and its credential together. A token created with a token names
   * it as `parentId`: the write fails with `UnauthorizedError` when the parent is gone, and counts
   * a child on the parent so that a deletion racing it notices (deletePersonalAccessToken).
   */
  createPersonalAccessToken(token: PersonalAccessToken, credential: CredentialRecord): Promise<void>;
  listPersonalAccessTokens(userId: string, page: PageRequest): Promise<Page<PersonalAccessToken>>;
  /**
   * Deletes the token and every token created with it, directly or not, together; false when the
   * token does not exist (or belongs to someone else).
   */
  deletePersonalAccessToken(userId: string, tokenId: string): Promise<boolean>;

  /**
   * Counts an attempt against the email from one source before its password is checked,
   * atomically, so that parallel guesses cannot all get past the limit. Refused once `limit`
   * attempts fall in the window; a window starts at the first attempt and lasts `windowSeconds`.
   */
  reserveLoginAttempt(email: string, source: LoginSource, now: Date, windowSeconds: number, limit: number): Promise<LoginAttempt>;
  /** Refuses further attempts for the email from that source until `until`. */
  lockLogin(email: string, source: LoginSource, until: Date, limit: number): Promise<void>;
  /** Forgets the attempts of the email from that source after a successful sign-in. */
  clearLoginAttempts(email: string, source: LoginSource): Promise<void>;

  /** The email's failures from every address in the current window; undefined when none. */
  getEmailFailures(email: string): Promise<EmailFailures | undefined>;
  /**
   * Counts one failure for the email (any address) and, when given, holds off its next attempt
   * until `nextAttemptAt`; answers the count in the window.
   */
  recordEmailFailure(email: string, now: Date, windowSeconds: number, nextAttemptAt?: Date): Promise<number>;
  /**
   * Takes the email's next slowed-down attempt, atomically: refused while an earlier one holds
   * the slot, with how long until it frees. On success no other attempt is let through before `nextAttemptAt`.
   */
  claimSlowedLoginAttempt(
    email: string,
    now: Date,
    nextAttemptAt: Date,
  ): Promise<{ claimed: true } | { claimed: false; retryAfterSeconds: number }>;
}
