import { randomBytes } from 'node:crypto';
import { BadRequestError, NotFoundError } from '../errors.js';
import type { CredentialRecord } from '../identity/identity-store.js';
import type { OAuthScope, Principal } from '../identity/principal.js';
import {
  constantTimeEqual,
  CREDENTIAL_PREFIX,
  grantIdOf,
  MAX_CREDENTIAL_LENGTH,
  newGrantSecret,
  newSecret,
  sha256Hex,
} from '../identity/secrets.js';
import { isUuid, newId } from '../ids.js';
import { METRIC } from '../observability/metric-names.js';
import { countEvent } from '../observability/metrics.js';
import type { Page, PageRequest } from '../page.js';
import { invalidClient, type ClientCredentials } from './client-authentication.js';
import type {
  AppChanges,
  AppSummary,
  AuthorizationCode,
  AuthorizationRequest,
  Grant,
  OAuthApp,
  OAuthClient,
  OAuthStore,
  RefreshToken,
  TokenIssue,
} from './oauth-store.js';
import { parseTokenRequest, tokenToRevoke, type AuthorizeParameters, type TokenRequest } from './oauth-parameters.js';
import { isWellFormedCodeVerifier, verifyCodeVerifier } from './pkce.js';

export const AUTHORIZATION_REQUEST_LIFETIME_SECONDS = 10 * 60;
export const AUTHORIZATION_CODE_LIFETIME_SECONDS = 10 * 60;
export const ACCESS_TOKEN_LIFETIME_SECONDS = 900;
export const REFRESH_TOKEN_LIFETIME_SECONDS = 30 * 86_400;
export const GRANT_LIFETIME_SECONDS = 90 * 86_400;

const AUTHORIZATION_REQUEST_ID = /^[A-Za-z0-9_-]{43}$/;
/** Compared against when the client does not exist, so both cases take the same time. */
const NO_SECRET_HASH = sha256Hex('no such client');

/** What the token endpoint hands out (RFC 6749 section 5.1). */
export interface TokenSet {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  scopes: OAuthScope[];
}

export interface NewApp {
  name: string;
  description: string;
  redirectUris: string[];
}

export interface AppWithSecret {
  app: OAuthApp;
  clientSecret: string;
}

/** A pending authorize request together with what the consent page shows of its application. */
export interface PendingAuthorization {
  request: AuthorizationRequest;
  app: AppSummary;
}

const isoAfter = (now: Date, seconds: number): string => new Date(now.getTime() + seconds * 1000).toISOString();
const earlier = (a: string, b: string): string => (Date.parse(a) <= Date.parse(b) ? a : b);

/** The redirect URI with the response parameters added; its own query is kept (RFC 6749 section 3.1.2). */
function redirectWith(redirectUri: string, parameters: Record<string, string>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(parameters)) url.searchParams.append(name, value);
  return url.toString();
}

const invalidGrant = (message: string) => new BadRequestError(message);
const requestGone = () =>
  new BadRequestError('This authorization request has expired or was already answered; start again from the application');
const appGone = () => new BadRequestError('The application no longer exists');

/**
 * The OAuth 2.0 authorization server: applications, the authorization code flow with PKCE,
 * refresh-token rotation with reuse detection, and revocation.
 */
export class OAuthService {
  constructor(
    private readonly store: OAuthStore,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async registerApp(principal: Principal, input: NewApp): Promise<AppWithSecret> {
    const now = this.now();
    const app: OAuthApp = {
      id: newId(now.getTime()),
      clientId: newId(now.getTime()),
      ownerId: principal.userId,
      name: input.name,
      description: input.description,
      redirectUris: input.redirectUris,
      createdAt: now.toISOString(),
      updatedAt: now.toISOString(),
    };
    const clientSecret = newSecret(CREDENTIAL_PREFIX.clientSecret);
    await this.store.createApp(app, sha256Hex(clientSecret));
    return { app, clientSecret };
  }

  listApps(principal: Principal, page: PageRequest): Promise<Page<OAuthApp>> {
    return this.store.listApps(principal.userId, page);
  }

  /** Applications belong to their creator; anyone else is told there is no such application. */
  async getApp(principal: Principal, appId: string): Promise<OAuthApp> {
    const app = await this.store.getApp(appId);
    if (!app || app.ownerId !== principal.userId) throw new NotFoundError('Application not found');
    return app;
  }

  async updateApp(principal: Principal, appId: string, changes: AppChanges): Promise<OAuthApp> {
    const app = await this.store.updateApp(principal.userId, appId, changes, this.now().toISOString());
    if (!app) throw new NotFoundError('Application not found');
    return app;
  }

  /** A new secret; the old one stops working the moment this returns. */
  async rotateClientSecret(principal: Principal, appId: string): Promise<AppWithSecret> {
    const app = await this.getApp(principal, appId);
    const clientSecret = newSecret(CREDENTIAL_PREFIX.clientSecret);
    const updatedAt = this.now().toISOString();
    if (!(await this.store.replaceClientSecret(principal.userId, app, sha256Hex(clientSecret), updatedAt))) {
      throw new NotFoundError('Application not found');
    }
    return { app: { ...app, updatedAt }, clientSecret };
  }

  /** Returns once every code, access token and refresh token of the application has stopped working. */
  async deleteApp(principal: Principal, appId: string): Promise<void> {
    const app = await this.store.getAppForDeletion(appId);
    if (!app || app.ownerId !== principal.userId) throw new NotFoundError('Application not found');
    await this.store.deleteApp(app);
  }

  /** Step 1 of the flow: checks the client and redirect URI, and stores the request for the consent page. */
  async startAuthorization(parameters: AuthorizeParameters): Promise<string> {
    const client = await this.store.getClient(parameters.clientId);
    const app = client && (await this.store.getApp(client.appId));
    if (!client || !app) throw new NotFoundError('No application has this client_id');
    // RFC 6749 section 3.1.2.4: an unregistered redirect URI is never redirected to.
    if (!app.redirectUris.includes(parameters.redirectUri)) {
      throw new BadRequestError('redirect_uri is not registered for this application');
    }
    const request: AuthorizationRequest = {
      id: randomBytes(32).toString('base64url'),
      appId: app.id,
      clientId: client.clientId,
      app: { name: app.name, description: app.description },
      redirectUri: parameters.redirectUri,
      scopes: parameters.scopes,
      state: parameters.state,
      ...(parameters.codeChallenge ? { codeChallenge: parameters.codeChallenge } : {}),
      expiresAt: isoAfter(this.now(), AUTHORIZATION_REQUEST_LIFETIME_SECONDS),
    };
    await this.store.putAuthorizationRequest(request);
    return request.id;
  }

  /** The request as the consent page shows it: one read, with the application as it was at authorize. */
  async pendingAuthorization(requestId: string): Promise<PendingAuthorization> {
    const request = await this.unexpiredRequest(requestId);
    return { request, app: request.app };
  }

  /** The user approved: consumes the request, issues a code, and returns where to send the browser. */
  async approveAuthorization(principal: Principal, requestId: string): Promise<string> {
    const { request, app } = await this.decidableRequest(requestId);
    const code = randomBytes(32).toString('base64url');
    const issued = await this.store.issueAuthorizationCode(request.id, {
      codeHash: sha256Hex(code),
      appId: app.id,
      clientId: request.clientId,
      userId: principal.userId,
      role: principal.role,
      scopes: request.scopes,
      redirectUri: request.redirectUri,
      ...(request.codeChallenge ? { codeChallenge: request.codeChallenge } : {}),
      grantId: newId(),
      redeemed: false,
      expiresAt: isoAfter(this.now(), AUTHORIZATION_CODE_LIFETIME_SECONDS),
    });
    if (!issued) throw requestGone();
    return redirectWith(request.redirectUri, { code, state: request.state });
  }

  /** The user denied (RFC 6749 section 4.1.2.1): the request is consumed and the client told `access_denied`. */
  async denyAuthorization(requestId: string): Promise<string> {
    const { request } = await this.decidableRequest(requestId);
    // The delete decides: of concurrent decisions on one request, only one gets it back.
    if (!(await this.store.takeAuthorizationRequest(request.id))) throw requestGone();
    return redirectWith(request.redirectUri, { error: 'access_denied', state: request.state });
  }

  /**
   * The token endpoint. Client authentication is judged first (401), then the grant (400),
   * the order docs/api-rules.md fixes; a malformed grant still costs one client lookup.
   */
  async issueTokens(credentials: ClientCredentials, parameters: Record<string, string>): Promise<TokenSet> {
    const request = parseTokenRequest(parameters);
    if (request instanceof BadRequestError) {
      await this.authenticateClient(credentials);
      throw request;
    }
    const tokens =
      request.grantType === 'authorization_code'
        ? await this.redeemAuthorizationCode(credentials, request)
        : await this.refreshTokens(credentials, request);
    countEvent(METRIC.tokenGrants, { grantType: request.grantType });
    return tokens;
  }

  /**
   * RFC 7009: revokes a refresh token's whole grant, or one access token. Unknown, expired
   * and already revoked tokens succeed silently; another client's token is refused.
   */
  async revokeToken(credentials: ClientCredentials, parameters: Record<string, string>): Promise<void> {
    const token = tokenToRevoke(parameters);
    if (token instanceof BadRequestError || !this.isPlausibleClientId(credentials) || token.length > MAX_CREDENTIAL_LENGTH) {
      await this.authenticateClient(credentials);
      if (token instanceof BadRequestError) throw token;
      return;
    }
    if (token.startsWith(CREDENTIAL_PREFIX.refreshToken) && grantIdOf(token)) {
      const grantId = grantIdOf(token)!;
      const { client, refreshToken, grant } = await this.store.getTokenGrant(credentials.clientId, sha256Hex(token), grantId);
      this.verifyClient(credentials, client);
      // Only the token's hash leads to its grant: knowing a grant id alone revokes nothing.
      if (!refreshToken || !grant || refreshToken.grantId !== grant.id || this.hasExpired(refreshToken.expiresAt)) return;
      if (grant.clientId !== client.clientId) throw new BadRequestError('This token was not issued to this client');
      await this.store.revokeGrant(grant.id);
      return;
    }
    if (token.startsWith(CREDENTIAL_PREFIX.accessToken)) {
      const { client, accessToken } = await this.store.getClientAndAccessToken(credentials.clientId, sha256Hex(token));
      this.verifyClient(credentials, client);
      if (accessToken?.kind !== 'oauth' || this.hasExpired(accessToken.expiresAt)) return;
      if (accessToken.clientId !== client.clientId) throw new BadRequestError('This token was not issued to this client');
      await this.store.revokeAccessToken(accessToken);
      return;
    }
    await this.authenticateClient(credentials);
  }

  private async redeemAuthorizationCode(
    credentials: ClientCredentials,
    request: Extract<TokenRequest, { grantType: 'authorization_code' }>,
  ): Promise<TokenSet> {
    if (!this.isPlausibleClientId(credentials) || request.code.length > MAX_CREDENTIAL_LENGTH) {
      await this.authenticateClient(credentials);
      throw invalidGrant('The authorization code is invalid');
    }
    const { client, code } = await this.store.getClientAndCode(credentials.clientId, sha256Hex(request.code));
    this.verifyClient(credentials, client);
    // RFC 6749 section 4.1.3: the code must have been issued to this very client.
    if (!code || code.clientId !== client.clientId) throw invalidGrant('The authorization code is invalid');
    if (code.redeemed) {
      // RFC 6749 section 4.1.2: a code used twice revokes what it produced.
      await this.store.revokeGrant(code.grantId);
      throw invalidGrant('The authorization code was already used; the tokens issued for it are revoked');
    }
    if (this.hasExpired(code.expiresAt)) throw invalidGrant('The authorization code has expired');
    if (request.redirectUri !== code.redirectUri) throw invalidGrant('redirect_uri does not match the authorization request');
    this.checkCodeVerifier(code, request.codeVerifier);

    const now = this.now();
    const expiresAt = isoAfter(now, GRANT_LIFETIME_SECONDS);
    const issue = this.newTokens(
      {
        id: code.grantId,
        clientId: code.clientId,
        appId: code.appId,
        userId: code.userId,
        role: code.role,
        scopes: code.scopes,
        expiresAt,
      },
      code.scopes,
      now,
    );
    const grant: Grant = {
      id: code.grantId,
      appId: code.appId,
      clientId: code.clientId,
      userId: code.userId,
      role: code.role,
      scopes: code.scopes,
      status: 'active',
      refreshTokenHash: issue.records.refreshToken.tokenHash,
      createdAt: now.toISOString(),
      expiresAt,
    };
    const outcome = await this.store.redeemAuthorizationCode(code, client, grant, issue.records);
    if (!outcome.committed) {
      if (outcome.reason === 'client-changed') throw invalidClient(credentials.method);
      await this.store.revokeGrant(code.grantId);
      throw invalidGrant('The authorization code was already used; the tokens issued for it are revoked');
    }
    return issue.tokens;
  }

  private async refreshTokens(
    credentials: ClientCredentials,
    request: Extract<TokenRequest, { grantType: 'refresh_token' }>,
  ): Promise<TokenSet> {
    const grantId = grantIdOf(request.refreshToken);
    if (!this.isPlausibleClientId(credentials) || !this.isPlausible(request.refreshToken, CREDENTIAL_PREFIX.refreshToken) || !grantId) {
      await this.authenticateClient(credentials);
      throw invalidGrant('The refresh token is invalid');
    }
    const tokenHash = sha256Hex(request.refreshToken);
    const { client, refreshToken, grant } = await this.store.getTokenGrant(credentials.clientId, tokenHash, grantId);
    this.verifyClient(credentials, client);
    if (!refreshToken || !grant || refreshToken.grantId !== grant.id || grant.clientId !== client.clientId) {
      throw invalidGrant('The refresh token is invalid');
    }
    if (grant.status === 'revoked') throw invalidGrant('The refresh token has been revoked');
    if (grant.refreshTokenHash !== tokenHash) {
      // A rotated token presented again means two parties hold it (RFC 9700 section 4.14.2).
      await this.store.revokeGrant(grant.id);
      countEvent(METRIC.refreshTokenReuse);
      throw invalidGrant('The refresh token was already used; every token of this authorization is revoked');
    }
    // DynamoDB deletes expired items lazily, so expiry is checked here, not left to TTL.
    if (this.hasExpired(refreshToken.expiresAt) || this.hasExpired(grant.expiresAt)) throw invalidGrant('The refresh token has expired');
    // RFC 6749 section 6: a narrower scope may be asked for, never a wider one.
    const scopes = request.scopes ?? grant.scopes;
    if (!scopes.every((scope) => grant.scopes.includes(scope))) {
      throw invalidGrant('scope may not exceed what the user granted');
    }

    const issue = this.newTokens(grant, scopes, this.now());
    const outcome = await this.store.rotateRefreshToken(grant, tokenHash, issue.records);
    if (outcome.committed) return issue.tokens;
    // Another request rotated it first (this one presented a token that is rotated now), or
    // the grant was revoked meanwhile: either way the grant ends here.
    await this.store.revokeGrant(grant.id);
    throw invalidGrant('The refresh token was already used; every token of this authorization is revoked');
  }

  /**
   * A fresh refresh token and access token of one grant. The refresh token keeps the
   * grant's scopes; the access token gets the requested ones. Neither outlives the grant.
   */
  private newTokens(
    grant: Pick<Grant, 'id' | 'appId' | 'clientId' | 'userId' | 'role' | 'scopes' | 'expiresAt'>,
    accessScopes: OAuthScope[],
    now: Date,
  ): { tokens: TokenSet; records: TokenIssue } {
    const refreshToken = newGrantSecret(CREDENTIAL_PREFIX.refreshToken, grant.id);
    const accessToken = newGrantSecret(CREDENTIAL_PREFIX.accessToken, grant.id);
    const accessExpiresAt = earlier(isoAfter(now, ACCESS_TOKEN_LIFETIME_SECONDS), grant.expiresAt);
    const accessRecord: CredentialRecord = {
      tokenHash: sha256Hex(accessToken),
      kind: 'oauth',
      userId: grant.userId,
      role: grant.role,
      scopes: accessScopes,
      expiresAt: accessExpiresAt,
      clientId: grant.clientId,
      appId: grant.appId,
      grantId: grant.id,
    };
    const refreshRecord: RefreshToken = {
      tokenHash: sha256Hex(refreshToken),
      grantId: grant.id,
      expiresAt: earlier(isoAfter(now, REFRESH_TOKEN_LIFETIME_SECONDS), grant.expiresAt),
    };
    return {
      tokens: {
        accessToken,
        refreshToken,
        expiresIn: Math.round((Date.parse(accessExpiresAt) - now.getTime()) / 1000),
        scopes: accessScopes,
      },
      records: { refreshToken: refreshRecord, accessToken: accessRecord },
    };
  }

  /** RFC 7636 section 4.6; and a verifier without a challenge is refused (RFC 9700 section 4.8.2). */
  private checkCodeVerifier(code: AuthorizationCode, verifier: string | undefined): void {
    if (!code.codeChallenge) {
      if (verifier !== undefined) throw invalidGrant('code_verifier was sent but the authorization request had no code_challenge');
      return;
    }
    if (verifier === undefined) throw invalidGrant('code_verifier is required');
    if (!isWellFormedCodeVerifier(verifier) || !verifyCodeVerifier(verifier, code.codeChallenge)) {
      throw invalidGrant('code_verifier does not match the code_challenge');
    }
  }

  private async unexpiredRequest(requestId: string): Promise<AuthorizationRequest> {
    if (!AUTHORIZATION_REQUEST_ID.test(requestId)) throw requestGone();
    const request = await this.store.getAuthorizationRequest(requestId);
    // DynamoDB deletes expired items lazily, so expiry is checked here, not left to TTL.
    if (!request || this.hasExpired(request.expiresAt)) throw requestGone();
    return request;
  }

  /**
   * A request the user may answer, with its application read afresh: the consent page showed
   * a snapshot, but the browser is only ever sent to a redirect URI that is registered now.
   */
  private async decidableRequest(requestId: string): Promise<{ request: AuthorizationRequest; app: OAuthApp }> {
    const request = await this.unexpiredRequest(requestId);
    const app = await this.store.getApp(request.appId);
    if (!app) throw appGone();
    // RFC 6749 section 3.1.2.4: an unregistered redirect URI is never redirected to.
    if (!app.redirectUris.includes(request.redirectUri)) {
      throw new BadRequestError('The application no longer accepts this redirect URI; start again from the application');
    }
    return { request, app };
  }

  private async authenticateClient(credentials: ClientCredentials): Promise<OAuthClient> {
    const client = this.isPlausibleClientId(credentials) ? await this.store.getClient(credentials.clientId) : undefined;
    this.verifyClient(credentials, client);
    return client;
  }

  /** Compares secret hashes in constant time, also when there is no such client. */
  private verifyClient(credentials: ClientCredentials, client: OAuthClient | undefined): asserts client is OAuthClient {
    const matches = constantTimeEqual(sha256Hex(credentials.clientSecret), client?.secretHash ?? NO_SECRET_HASH);
    if (!client || !matches) throw invalidClient(credentials.method);
  }

  private isPlausibleClientId(credentials: ClientCredentials): boolean {
    return isUuid(credentials.clientId);
  }

  private isPlausible(token: string, prefix: string): boolean {
    return token.length <= MAX_CREDENTIAL_LENGTH && token.startsWith(prefix);
  }

  private hasExpired(expiresAt: string): boolean {
    return Date.parse(expiresAt) <= this.now().getTime();
  }
}
