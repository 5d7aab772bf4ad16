import type { CredentialRecord } from '../identity/identity-store.js';
import type { OAuthScope, Role } from '../identity/principal.js';
import type { Page, PageRequest } from '../page.js';

/** A registered third-party application, as its owner manages it. */
export interface OAuthApp {
  id: string;
  clientId: string;
  ownerId: string;
  name: string;
  description: string;
  redirectUris: string[];
  createdAt: string;
  updatedAt: string;
}

/** What the token endpoint needs of an application, found by `client_id`. */
export interface OAuthClient {
  clientId: string;
  appId: string;
  secretHash: string;
}

export type AppChanges = Partial<Pick<OAuthApp, 'name' | 'description' | 'redirectUris'>>;

/** What the consent page shows of an application. */
export type AppSummary = Pick<OAuthApp, 'name' | 'description'>;

/** A validated authorize request waiting for the user's decision on the consent page. */
export interface AuthorizationRequest {
  id: string;
  appId: string;
  clientId: string;
  /**
   * The application as it was when the request was made, so the consent page need not read
   * it again; the decision re-reads the application itself.
   */
  app: AppSummary;
  redirectUri: string;
  scopes: OAuthScope[];
  state: string;
  codeChallenge?: string;
  /** `consent`: the page is shown even when a remembered grant covers the scopes. */
  prompt?: 'consent';
  expiresAt: string;
}

/** Stored by hash only. `grantId` is chosen at issue time so a replay can find what the code produced. */
export interface AuthorizationCode {
  codeHash: string;
  appId: string;
  clientId: string;
  userId: string;
  role: Role;
  scopes: OAuthScope[];
  redirectUri: string;
  codeChallenge?: string;
  grantId: string;
  redeemed: boolean;
  expiresAt: string;
}

/**
 * One user's authorization of one application; every token descends from exactly one and is
 * checked against it at use. Revoking it is one write: `status` becomes `revoked`.
 */
export interface Grant {
  id: string;
  appId: string;
  clientId: string;
  userId: string;
  role: Role;
  scopes: OAuthScope[];
  status: 'active' | 'revoked';
  /** The hash of the one refresh token that may be used next; any other of the grant's is rotated. */
  refreshTokenHash: string;
  createdAt: string;
  /** At most 90 days after the code was redeemed; no token of the grant outlives it. */
  expiresAt: string;
  /** When the application last obtained tokens with it (code exchange or refresh); absent on older grants. */
  lastUsedAt?: string;
}

/** Stored by hash only, and kept until it expires so a replayed rotated token is recognised. */
export interface RefreshToken {
  tokenHash: string;
  grantId: string;
  expiresAt: string;
}

/** The new refresh token and the access-token credential a grant hands out together. */
export interface TokenIssue {
  refreshToken: RefreshToken;
  accessToken: CredentialRecord;
}

/** Why a token transaction did not commit. */
export type TokenWriteFailure =
  /** The code was redeemed or the refresh token rotated (or revoked) by someone else first. */
  | 'already-used'
  /** The client's secret changed or the application was deleted since it was read. */
  | 'client-changed'
  /** The grant was revoked since the refresh token was read. */
  | 'grant-revoked';

export type TokenWriteOutcome = { committed: true } | { committed: false; reason: TokenWriteFailure };

/** What every client-authenticating store offers: the client by `client_id`. */
interface ClientLookup {
  getClient(clientId: string): Promise<OAuthClient | undefined>;
}

/** One round trip: the client by id, the refresh token by hash and the grant by id. */
type TokenGrantRead = (
  clientId: string,
  tokenHash: string,
  grantId: string,
) => Promise<{ client?: OAuthClient; refreshToken?: RefreshToken; grant?: Grant }>;

/** Applications as their owner manages them (lib/oauth/applications.ts). */
export interface ApplicationStore extends ClientLookup {
  /** Writes the application and its client lookup together. */
  createApp(app: OAuthApp, secretHash: string): Promise<void>;
  /** `undefined` when missing or being deleted. */
  getApp(appId: string): Promise<OAuthApp | undefined>;
  listApps(ownerId: string, page: PageRequest): Promise<Page<OAuthApp>>;
  /** `undefined` when the application is gone or not the owner's. */
  updateApp(ownerId: string, appId: string, changes: AppChanges, updatedAt: string): Promise<OAuthApp | undefined>;
  /** False when the application is gone or not the owner's. */
  replaceClientSecret(ownerId: string, app: OAuthApp, secretHash: string, updatedAt: string): Promise<boolean>;
  /**
   * Removes the application's client first, so no code exchange, refresh or consent can
   * commit any more, then everything the application issued; resumable if interrupted.
   */
  deleteApp(app: OAuthApp): Promise<void>;
  /** An application that is being deleted still answers, so its deletion can be resumed. */
  getAppForDeletion(appId: string): Promise<OAuthApp | undefined>;
}

/** The authorize request, the consent decision and the code (lib/oauth/authorization.ts). */
export interface AuthorizationStore extends ClientLookup {
  /** `undefined` when missing or being deleted. */
  getApp(appId: string): Promise<OAuthApp | undefined>;
  putAuthorizationRequest(request: AuthorizationRequest): Promise<void>;
  getAuthorizationRequest(requestId: string): Promise<AuthorizationRequest | undefined>;
  /** Deletes the request and returns it; only one caller ever gets it back. */
  takeAuthorizationRequest(requestId: string): Promise<AuthorizationRequest | undefined>;
  /**
   * Consumes the request and stores the code in one transaction, provided the client still
   * exists. False when the request was already consumed or the application is gone.
   */
  issueAuthorizationCode(requestId: string, code: AuthorizationCode): Promise<boolean>;
  /** The user's grants for one client, as last written (the caller checks status and expiry). */
  grantsOfUserForClient(userId: string, clientId: string): Promise<Grant[]>;
}

/** One entry of a user's list of grants, with what is left of its grant and application. */
export interface UserGrantEntry {
  grantId: string;
  grant?: Grant;
  /** Absent when the application is gone or being deleted. */
  app?: OAuthApp;
}

/** A user's authorized applications (lib/oauth/authorized-apps.ts). */
export interface AuthorizedAppStore {
  /** One page of the user's grants, newest first, each read with its grant and application. */
  listUserGrants(userId: string, page: PageRequest): Promise<Page<UserGrantEntry>>;
  getGrant(grantId: string): Promise<Grant | undefined>;
  /** Revokes the grant (every token of it stops) and takes it off the user's list. */
  revokeUserGrant(grant: Grant): Promise<void>;
}

/** The token endpoint: code exchange and refresh (lib/oauth/token-grants.ts). */
export interface TokenGrantStore extends ClientLookup {
  /** One round trip: the client by id and the code by hash. */
  getClientAndCode(clientId: string, codeHash: string): Promise<{ client?: OAuthClient; code?: AuthorizationCode }>;
  getTokenGrant: TokenGrantRead;
  /**
   * One transaction: marks the code redeemed (if it still is unredeemed), checks the client's
   * secret is still `client.secretHash`, creates the grant and writes the tokens.
   */
  redeemAuthorizationCode(code: AuthorizationCode, client: OAuthClient, grant: Grant, tokens: TokenIssue): Promise<TokenWriteOutcome>;
  /**
   * Moves the grant from `previousHash` to the new refresh token, if the grant is still active
   * and `previousHash` is still its current token, and writes the new tokens: three items.
   */
  rotateRefreshToken(grant: Grant, previousHash: string, tokens: TokenIssue, usedAt: string): Promise<TokenWriteOutcome>;
  /** Ends the grant: every token it issued stops working. One write; idempotent. */
  revokeGrant(grantId: string): Promise<void>;
}

/** The revocation endpoint, RFC 7009 (lib/oauth/revocation.ts). */
export interface RevocationStore extends ClientLookup {
  getTokenGrant: TokenGrantRead;
  /** One round trip: the client by id and an access-token credential by hash. */
  getClientAndAccessToken(clientId: string, tokenHash: string): Promise<{ client?: OAuthClient; accessToken?: CredentialRecord }>;
  /** Ends the grant: every token it issued stops working. One write; idempotent. */
  revokeGrant(grantId: string): Promise<void>;
  revokeAccessToken(accessToken: CredentialRecord): Promise<void>;
}
