import type { OAuthScope, ProtectedResource, Role } from '../identity/principal.js';
import type { Page, PageRequest } from '../page.js';

/** A registered third-party application, as its owner manages it. */
export interface OAuthApp {
  id: string;
  clientId: string;
  ownerId: string;
  name: string;
  description: string;
  redirectUris: string[];
  /** `none`: a public client (docs/oauth.md, "Public clients"); absent on older records, which are confidential. */
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod;
  createdAt: string;
  updatedAt: string;
  /** Until when the secret replaced by the last rotation still works; absent when none does. */
  previousSecretExpiresAt?: string;
  /**
   * The refresh retry grace its owner chose for it, 0 to 60 s (docs/oauth.md, "Refresh retries");
   * absent: the operator's REFRESH_REUSE_GRACE_SECONDS, 0 unless set.
   */
  refreshReuseGraceSeconds?: number;
  /**
   * Set on a client nobody owns (dynamic registration, a client metadata document) until someone
   * authorizes it: past it, the application and its client are gone (docs/oauth.md, "Agents").
   */
  expiresAt?: string;
}

/**
 * How a client authenticates at the token endpoint (RFC 7591 section 2). A confidential client
 * (`client_secret_basic`, or `client_secret_post` as registered) may use either secret method.
 */
export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';

/** What the token endpoint needs of an application, found by `client_id`. */
export interface OAuthClient {
  clientId: string;
  appId: string;
  /** Absent for a public client, which has no secret and authenticates by `client_id` alone. */
  secretHash?: string;
  /** The secret the last rotation replaced, while its overlap lasts (docs/oauth.md, "Rotating a client secret"). */
  previousSecret?: { hash: string; expiresAt: string };
  /** The application's own refresh retry grace, kept here so a refresh reads it with the client; absent: the operator's. */
  refreshReuseGraceSeconds?: number;
}

/** `refreshReuseGraceSeconds: null` returns the application to the operator's setting. */
export type AppChanges = Partial<Pick<OAuthApp, 'name' | 'description' | 'redirectUris'>> & { refreshReuseGraceSeconds?: number | null };

/**
 * What the consent page shows of an application. `unreviewed`: nobody this service knows made it
 * (dynamically registered, or described by a client metadata document), so the page says so.
 */
export type AppSummary = Pick<OAuthApp, 'name' | 'description'> & { unreviewed?: true };

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
  /** The resource the client asked for (RFC 8707); absent when it named none. */
  resource?: ProtectedResource;
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
  /** The resource the authorization was asked for (RFC 8707); its grant keeps it. */
  resource?: ProtectedResource;
  grantId: string;
  redeemed: boolean;
  expiresAt: string;
}

/**
 * An access token as its grant holds it: by hash, with its expiry and, when they are narrower
 * than the grant's, its scopes (a refresh may ask for fewer).
 */
export interface AccessTokenSlot {
  tokenHash: string;
  expiresAt: string;
  /** Absent: the grant's scopes. */
  scopes?: OAuthScope[];
  /** The resource the token is bound to (RFC 8707) when the token request named one and the grant does not. */
  resource?: ProtectedResource;
}

/**
 * One user's authorization of one application, and every token of it: the tokens carry the
 * grant's id and are checked against it at use, so the grant is the only record a refresh
 * reads and writes (docs/oauth.md, "Records"). Revoking it is one write: `status` becomes `revoked`.
 */
export interface Grant {
  id: string;
  appId: string;
  clientId: string;
  userId: string;
  role: Role;
  scopes: OAuthScope[];
  /**
   * The resource the authorization was given for (RFC 8707): its access tokens are bound to it.
   * Absent for one asked without `resource`: its tokens are the REST API's (lib/oauth/resources.ts).
   */
  resource?: ProtectedResource;
  status: 'active' | 'revoked';
  /** The hash of the one refresh token that may be used next; any other token naming the grant is a replay. */
  refreshTokenHash: string;
  /** When that refresh token expires: 30 days after it was issued, never past the grant. */
  refreshExpiresAt: string;
  /**
   * The access token issued with the current refresh token, then the one issued before it:
   * each is live until its 900 s run out. Older ones are gone from the grant and refused.
   */
  accessTokens: AccessTokenSlot[];
  createdAt: string;
  /** At most 90 days after the code was redeemed; no token of the grant outlives it. */
  expiresAt: string;
  /** When the application last obtained tokens with it (code exchange or refresh); absent on older grants. */
  lastUsedAt?: string;
}

/** What a code exchange or a refresh hands out, as the grant keeps it. */
export interface TokenIssue {
  refreshTokenHash: string;
  refreshExpiresAt: string;
  accessToken: AccessTokenSlot;
}

/** Why a token transaction did not commit. */
export type TokenWriteFailure =
  /** The code was redeemed or the refresh token rotated (or revoked) by someone else first. */
  | 'already-used'
  /** The client's secret changed or the application was deleted since it was read. */
  | 'client-changed';

export type TokenWriteOutcome =
  | { committed: true }
  /** `grant`: a refresh's grant as the write found it, when it failed its condition. */
  | { committed: false; reason: TokenWriteFailure; grant?: Grant };

/** What every client-authenticating store offers: the client by `client_id`. */
interface ClientLookup {
  getClient(clientId: string): Promise<OAuthClient | undefined>;
}

/** One round trip: the client by id and the grant a token names. */
type TokenGrantRead = (clientId: string, grantId: string) => Promise<{ client?: OAuthClient; grant?: Grant }>;

/** Applications as their owner manages them (lib/oauth/applications.ts). */
export interface ApplicationStore extends ClientLookup {
  /** Writes the application and its client lookup together. */
  createApp(app: OAuthApp, secretHash: string | undefined): Promise<void>;
  /** `undefined` when missing or being deleted. */
  getApp(appId: string): Promise<OAuthApp | undefined>;
  listApps(ownerId: string, page: PageRequest): Promise<Page<OAuthApp>>;
  /** `undefined` when the application is gone or not the owner's. */
  updateApp(ownerId: string, appId: string, changes: AppChanges, updatedAt: string): Promise<OAuthApp | undefined>;
  /**
   * The new secret becomes current and the current one previous until `previousExpiresAt`
   * (none when undefined); an earlier previous secret is dropped. False when the application is
   * gone or not the owner's.
   */
  replaceClientSecret(
    ownerId: string,
    app: OAuthApp,
    secretHash: string,
    updatedAt: string,
    previousExpiresAt: string | undefined,
  ): Promise<boolean>;
  /** The previous secret stops; the application as it is now, or `undefined` when it is gone or not the owner's. */
  endPreviousSecret(ownerId: string, appId: string, updatedAt: string): Promise<OAuthApp | undefined>;
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
  /** Writes (or refreshes) the application a client metadata document describes (lib/oauth/client-metadata.ts). */
  saveDocumentClient(app: OAuthApp): Promise<void>;
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
/** The grants one user gave one application, as the user's list groups them. */
export interface UserAppGrants {
  appId: string;
  /** Those the index names that are still stored; the domain decides which are live. */
  grants: Grant[];
  /** Absent when the application is gone or being deleted. */
  app?: OAuthApp;
}

/** A user's authorized applications (lib/oauth/authorized-apps.ts). */
export interface AuthorizedAppStore {
  /**
   * One page of the applications the user's grants unexpired at `now` are for, the most recently
   * authorized first, each with all its grants and the application.
   */
  listUserApps(userId: string, page: PageRequest, now: Date): Promise<Page<UserAppGrants>>;
  /** The user's grants of the application with this client id. */
  grantsOfClient(userId: string, clientId: string): Promise<Grant[]>;
  getGrant(grantId: string): Promise<Grant | undefined>;
  /** Revokes the grants (every token of them stops) and takes them off the user's list. */
  revokeUserGrants(grants: readonly Grant[]): Promise<void>;
}

/** The token endpoint: code exchange and refresh (lib/oauth/token-grants.ts). */
export interface TokenGrantStore extends ClientLookup {
  /** One round trip: the client by id and the code by hash. */
  getClientAndCode(clientId: string, codeHash: string): Promise<{ client?: OAuthClient; code?: AuthorizationCode }>;
  getTokenGrant: TokenGrantRead;
  /**
   * One transaction: marks the code redeemed (if it still is unredeemed), checks the client's
   * secret is still `client.secretHash`, and creates the grant, which holds the first tokens.
   */
  redeemAuthorizationCode(code: AuthorizationCode, client: OAuthClient, grant: Grant): Promise<TokenWriteOutcome>;
  /**
   * Moves the grant from `previousHash` to the new tokens, if the grant is still active and
   * `previousHash` is still its refresh token: one conditional write of one item.
   */
  rotateRefreshToken(grantId: string, previousHash: string, tokens: TokenIssue, usedAt: string): Promise<TokenWriteOutcome>;
  /** Ends the grant: every token it issued stops working. One write; idempotent. */
  revokeGrant(grantId: string): Promise<void>;
}

/** The revocation endpoint, RFC 7009 (lib/oauth/revocation.ts). */
export interface RevocationStore extends ClientLookup {
  getTokenGrant: TokenGrantRead;
  /** Ends the grant: every token it issued stops working. One write; idempotent. */
  revokeGrant(grantId: string): Promise<void>;
  /** Ends one access token of the grant, if the grant still holds it; the grant and its other tokens live on. */
  revokeAccessToken(grantId: string, tokenHash: string): Promise<void>;
}
