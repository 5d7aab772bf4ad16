import { ConflictError, NotFoundError } from '../errors.js';
import type { Principal } from '../identity/principal.js';
import { CREDENTIAL_PREFIX, newSecret, sha256Hex } from '../identity/secrets.js';
import { newId } from '../ids.js';
import type { Page, PageRequest } from '../page.js';
import { isoAfter } from './lifetimes.js';
import type { AppChanges, ApplicationStore, OAuthApp, TokenEndpointAuthMethod } from './oauth-store.js';

/**
 * How long a replaced client secret keeps working unless the rotation asks for an overlap: not at
 * all, the seed's rule (product.md section 9), so rotating a leaked secret ends it at once.
 */
export const DEFAULT_PREVIOUS_SECRET_TTL_SECONDS = 0;
/** The longest overlap a rotation may ask for: one week. */
export const MAX_PREVIOUS_SECRET_TTL_SECONDS = 604_800;

export interface NewApp {
  name: string;
  description: string;
  redirectUris: string[];
  /** Default `client_secret_basic`; `none` registers a public client, which gets no secret. */
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod;
}

export interface AppWithSecret {
  app: OAuthApp;
  /** `null` for a public client. */
  clientSecret: string | null;
}

export const isPublicClient = (app: Pick<OAuthApp, 'tokenEndpointAuthMethod'>): boolean => app.tokenEndpointAuthMethod === 'none';

/** OAuth applications as their owner registers and manages them (docs/oauth.md, "Endpoints"). */
export class ApplicationService {
  constructor(
    private readonly store: ApplicationStore,
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
      tokenEndpointAuthMethod: input.tokenEndpointAuthMethod ?? 'client_secret_basic',
      createdAt: now.toISOString(),
      updatedAt: now.toISOString(),
    };
    const clientSecret = isPublicClient(app) ? null : newSecret(CREDENTIAL_PREFIX.clientSecret);
    await this.store.createApp(app, clientSecret === null ? undefined : sha256Hex(clientSecret));
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

  /**
   * A new secret; the one it replaces keeps working for `previousSecretTtlSeconds` (none when 0),
   * so every instance of the application can move to the new one without an outage. A secret
   * replaced earlier stops at once.
   */
  async rotateClientSecret(
    principal: Principal,
    appId: string,
    previousSecretTtlSeconds = DEFAULT_PREVIOUS_SECRET_TTL_SECONDS,
  ): Promise<AppWithSecret & { clientSecret: string }> {
    const app = await this.getApp(principal, appId);
    if (isPublicClient(app)) throw new ConflictError('A public client (token_endpoint_auth_method none) has no secret to rotate');
    const clientSecret = newSecret(CREDENTIAL_PREFIX.clientSecret);
    const now = this.now();
    const updatedAt = now.toISOString();
    const previousExpiresAt = previousSecretTtlSeconds > 0 ? isoAfter(now, previousSecretTtlSeconds) : undefined;
    if (!(await this.store.replaceClientSecret(principal.userId, app, sha256Hex(clientSecret), updatedAt, previousExpiresAt))) {
      throw new NotFoundError('Application not found');
    }
    const { previousSecretExpiresAt: _replaced, ...rest } = app;
    return { app: { ...rest, updatedAt, ...(previousExpiresAt ? { previousSecretExpiresAt: previousExpiresAt } : {}) }, clientSecret };
  }

  /** Ends the overlap of the last rotation: the previous secret stops the moment this returns. */
  async endPreviousSecret(principal: Principal, appId: string): Promise<OAuthApp> {
    const app = await this.store.endPreviousSecret(principal.userId, appId, this.now().toISOString());
    if (!app) throw new NotFoundError('Application not found');
    return app;
  }

  /** Returns once every code, access token and refresh token of the application has stopped working. */
  async deleteApp(principal: Principal, appId: string): Promise<void> {
    const app = await this.store.getAppForDeletion(appId);
    if (!app || app.ownerId !== principal.userId) throw new NotFoundError('Application not found');
    await this.store.deleteApp(app);
  }
}
