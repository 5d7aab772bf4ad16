import { randomBytes } from 'node:crypto';
import { BadRequestError, NotFoundError } from '../errors.js';
import type { Principal } from '../identity/principal.js';
import { sha256Hex } from '../identity/secrets.js';
import { newId } from '../ids.js';
import { AUTHORIZATION_CODE_LIFETIME_SECONDS, AUTHORIZATION_REQUEST_LIFETIME_SECONDS, hasExpired, isoAfter } from './lifetimes.js';
import type { AuthorizeParameters } from './oauth-parameters.js';
import { isClientIdUrl } from './client-id-url.js';
import type { ClientMetadataResolver } from './client-metadata.js';
import { FIRST_PARTY_CLI_CLIENT_ID, UNOWNED } from './first-party-client.js';
import { isRegisteredRedirectUri } from './redirect-uris.js';
import type { AppSummary, AuthorizationRequest, AuthorizationStore, Grant, OAuthApp, OAuthClient } from './oauth-store.js';

const AUTHORIZATION_REQUEST_ID = /^[A-Za-z0-9_-]{43}$/;

/** A pending authorize request together with what the consent page shows of its application. */
export interface PendingAuthorization {
  request: AuthorizationRequest;
  app: AppSummary;
}

/**
 * The redirect URI with the response parameters added; its own query is kept (RFC 6749 section
 * 3.1.2). Every authorization response, success or error, names the issuer (RFC 9207 section 2), so
 * a client talking to several servers can tell which one answered (mix-up attacks).
 */
function redirectWith(redirectUri: string, issuer: string, parameters: Record<string, string>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries({ ...parameters, iss: issuer })) url.searchParams.append(name, value);
  return url.toString();
}

/** Applications nobody owns other than this service's own CLI: what they say of themselves was checked by no one. */
const isUnreviewed = (app: OAuthApp): boolean => app.ownerId === UNOWNED && app.clientId !== FIRST_PARTY_CLI_CLIENT_ID;

/** A grant whose tokens still work: active and unexpired. */
export const isLiveGrant = (grant: Pick<Grant, 'status' | 'expiresAt'>, now: Date): boolean =>
  grant.status === 'active' && !hasExpired(grant.expiresAt, now);

const requestGone = () =>
  new BadRequestError('This authorization request has expired or was already answered; start again from the application');
const appGone = () => new BadRequestError('The application no longer exists');

/**
 * The authorization endpoint and the consent decision (RFC 6749 section 4.1.1 to 4.1.2): the
 * request is checked and stored, shown, and answered once with a code or `access_denied`.
 */
export class AuthorizationService {
  constructor(
    private readonly store: AuthorizationStore,
    private readonly now: () => Date = () => new Date(),
    /** Resolves an https `client_id` to the application its metadata document describes; without it, such ids are unknown. */
    private readonly clientMetadata?: Pick<ClientMetadataResolver, 'resolve'>,
  ) {}

  /**
   * Step 1 of the flow: checks the client and redirect URI, and stores the request for the consent
   * page. `requesterAddress` bounds the client metadata document fetches made on its behalf.
   */
  async startAuthorization(parameters: AuthorizeParameters, requesterAddress = ''): Promise<string> {
    const { client, app } = await this.clientOf(parameters.clientId, requesterAddress);
    if (!client || !app) throw new NotFoundError('No application has this client_id');
    // RFC 6749 section 3.1.2.4: an unregistered redirect URI is never redirected to.
    if (!isRegisteredRedirectUri(app.redirectUris, parameters.redirectUri, client.secretHash === undefined)) {
      throw new BadRequestError('redirect_uri is not registered for this application');
    }
    // A public client cannot keep a code from whoever intercepts the redirect: PKCE must bind it (RFC 9700 section 2.1.1).
    if (client.secretHash === undefined && !parameters.codeChallenge) {
      throw new BadRequestError('A public client must send code_challenge with code_challenge_method=S256');
    }
    const request: AuthorizationRequest = {
      id: randomBytes(32).toString('base64url'),
      appId: app.id,
      clientId: client.clientId,
      app: { name: app.name, description: app.description, ...(isUnreviewed(app) ? { unreviewed: true as const } : {}) },
      redirectUri: parameters.redirectUri,
      scopes: parameters.scopes,
      state: parameters.state,
      ...(parameters.codeChallenge ? { codeChallenge: parameters.codeChallenge } : {}),
      ...(parameters.prompt ? { prompt: parameters.prompt } : {}),
      ...(parameters.resource ? { resource: parameters.resource } : {}),
      expiresAt: isoAfter(this.now(), AUTHORIZATION_REQUEST_LIFETIME_SECONDS),
    };
    await this.store.putAuthorizationRequest(request);
    return request.id;
  }

  /** The client and its application: stored, or described by the client metadata document at an https `client_id`. */
  private async clientOf(clientId: string, requesterAddress: string): Promise<{ client?: OAuthClient; app?: OAuthApp }> {
    if (this.clientMetadata && isClientIdUrl(clientId)) {
      const app = await this.clientMetadata.resolve(clientId, requesterAddress);
      return { client: { clientId, appId: app.id }, app };
    }
    const client = await this.store.getClient(clientId);
    return { client, app: client && (await this.store.getApp(client.appId)) };
  }

  /** The request as the consent page shows it: one read, with the application as it was at authorize. */
  async pendingAuthorization(requestId: string): Promise<PendingAuthorization> {
    const request = await this.unexpiredRequest(requestId);
    return { request, app: request.app };
  }

  /**
   * The user approved: consumes the request, issues a code, and returns where to send the browser.
   * `issuer` is this server's issuer identifier (lib/oauth/metadata.ts), sent back as `iss`.
   */
  approveAuthorization(principal: Principal, requestId: string, issuer: string): Promise<string> {
    return this.approve(principal, requestId, issuer);
  }

  /**
   * Remembered consent (docs/oauth.md): when the user already holds a live grant for this client
   * whose scopes cover the requested ones, the request is approved without the page, unless it
   * asked for `prompt=consent`. The code carries exactly the requested scopes, never the remembered
   * grant's wider ones (RFC 6749 section 3.3). `undefined` when the page must be shown.
   */
  async approveIfRemembered(principal: Principal, request: AuthorizationRequest, issuer: string): Promise<string | undefined> {
    if (request.prompt === 'consent') return undefined;
    const now = this.now();
    const remembered = (await this.store.grantsOfUserForClient(principal.userId, request.clientId)).some(
      (grant) => isLiveGrant(grant, now) && request.scopes.every((scope) => grant.scopes.includes(scope)),
    );
    return remembered ? this.approve(principal, request.id, issuer) : undefined;
  }

  private async approve(principal: Principal, requestId: string, issuer: string): Promise<string> {
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
      ...(request.resource ? { resource: request.resource } : {}),
      grantId: newId(),
      redeemed: false,
      expiresAt: isoAfter(this.now(), AUTHORIZATION_CODE_LIFETIME_SECONDS),
    });
    if (!issued) throw requestGone();
    return redirectWith(request.redirectUri, issuer, { code, state: request.state });
  }

  /** The user denied (RFC 6749 section 4.1.2.1): the request is consumed and the client told `access_denied`. */
  async denyAuthorization(requestId: string, issuer: string): Promise<string> {
    const { request } = await this.decidableRequest(requestId);
    // The delete decides: of concurrent decisions on one request, only one gets it back.
    if (!(await this.store.takeAuthorizationRequest(request.id))) throw requestGone();
    return redirectWith(request.redirectUri, issuer, { error: 'access_denied', state: request.state });
  }

  private async unexpiredRequest(requestId: string): Promise<AuthorizationRequest> {
    if (!AUTHORIZATION_REQUEST_ID.test(requestId)) throw requestGone();
    const request = await this.store.getAuthorizationRequest(requestId);
    if (!request || hasExpired(request.expiresAt, this.now())) throw requestGone();
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
    if (!isRegisteredRedirectUri(app.redirectUris, request.redirectUri, app.tokenEndpointAuthMethod === 'none')) {
      throw new BadRequestError('The application no longer accepts this redirect URI; start again from the application');
    }
    return { request, app };
  }
}
