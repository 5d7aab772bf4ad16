import { NotFoundError } from '../errors.js';
import type { OAuthScope, Principal } from '../identity/principal.js';
import type { Page, PageRequest } from '../page.js';
import { isLiveGrant } from './authorization.js';
import type { AuthorizedAppStore, OAuthApp } from './oauth-store.js';

/** One application the user authorized: one grant, as GET /api/v1/authorizations lists it. */
export interface AuthorizedApp {
  /** The grant's id. */
  id: string;
  application: Pick<OAuthApp, 'clientId' | 'name' | 'description'>;
  scopes: OAuthScope[];
  createdAt: string;
  /** When the application last obtained tokens with it (code exchange or refresh). */
  lastUsedAt: string | null;
}

const notFound = () => new NotFoundError('Authorization not found');

/**
 * The applications a user authorized, and revoking them (docs/oauth.md, "Authorized
 * applications"). Each approval that the application exchanged for tokens is one grant.
 */
export class AuthorizedAppService {
  constructor(
    private readonly store: AuthorizedAppStore,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Newest first. Revoked, expired and deleted applications' grants are left out, so a page may hold fewer than `limit`. */
  async listAuthorizations(principal: Principal, page: PageRequest): Promise<Page<AuthorizedApp>> {
    const result = await this.store.listUserGrants(principal.userId, page);
    const now = this.now();
    const items = result.items.flatMap(({ grant, app }) =>
      grant && app && grant.userId === principal.userId && isLiveGrant(grant, now)
        ? [
            {
              id: grant.id,
              application: { clientId: app.clientId, name: app.name, description: app.description },
              scopes: grant.scopes,
              createdAt: grant.createdAt,
              lastUsedAt: grant.lastUsedAt ?? null,
            },
          ]
        : [],
    );
    return { ...result, items };
  }

  /** Returns once every code, access token and refresh token of the grant has stopped working. Another user's grant is 404. */
  async revokeAuthorization(principal: Principal, grantId: string): Promise<void> {
    const grant = await this.store.getGrant(grantId);
    if (!grant || grant.userId !== principal.userId || !isLiveGrant(grant, this.now())) throw notFound();
    await this.store.revokeUserGrant(grant);
  }
}
