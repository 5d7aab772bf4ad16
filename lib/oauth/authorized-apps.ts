import { NotFoundError } from '../errors.js';
import { ALL_SCOPES, type OAuthScope, type Principal } from '../identity/principal.js';
import type { Page, PageRequest } from '../page.js';
import { isLiveGrant } from './authorization.js';
import type { AuthorizedAppStore, OAuthApp } from './oauth-store.js';
import { isClientIdUrl } from './client-id-url.js';
import { FIRST_PARTY_CLI_CLIENT_ID, UNOWNED } from './first-party-client.js';

/**
 * One application the user authorized, as GET /api/v1/authorizations lists it: one row however
 * many grants the person gave it (a narrower consent after a wider one makes a second grant).
 */
export interface AuthorizedApp {
  /** The application's client id: one row per (person, application), and what revoking names. */
  id: string;
  application: Pick<OAuthApp, 'clientId' | 'name' | 'description'> & { kind: ApplicationKind };
  /** Every scope any of its live grants holds. */
  scopes: OAuthScope[];
  /** When the person first authorized it (the oldest live grant). */
  createdAt: string;
  /** When the application last obtained tokens with any of them (code exchange or refresh). */
  lastUsedAt: string | null;
}

/**
 * Who stands behind an application, as the person's list shows it: one its owner registered here,
 * this service's own CLI, or an agent nobody here registered, which either registered itself
 * (RFC 7591) or is known by its client metadata document's URL (docs/oauth.md, "Agents").
 */
export type ApplicationKind = 'registered' | 'first_party' | 'dynamic_registration' | 'metadata_document';

export function applicationKindOf(app: Pick<OAuthApp, 'clientId' | 'ownerId'>): ApplicationKind {
  if (app.clientId === FIRST_PARTY_CLI_CLIENT_ID) return 'first_party';
  if (app.ownerId !== UNOWNED) return 'registered';
  return isClientIdUrl(app.clientId) ? 'metadata_document' : 'dynamic_registration';
}

const notFound = () => new NotFoundError('Authorization not found');

const latest = (dates: ReadonlyArray<string | undefined>): string | null =>
  dates.reduce<string | null>((newest, date) => (date && (newest === null || date > newest) ? date : newest), null);

/**
 * The applications a user authorized, and revoking them (docs/oauth.md, "Authorized
 * applications"). Each approval that the application exchanged for tokens is one grant; the
 * person sees, and revokes, the application.
 */
export class AuthorizedAppService {
  constructor(
    private readonly store: AuthorizedAppStore,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Most recently authorized first. Applications with no live grant left are left out, so a page may hold fewer than `limit`. */
  async listAuthorizations(principal: Principal, page: PageRequest): Promise<Page<AuthorizedApp>> {
    const now = this.now();
    const result = await this.store.listUserApps(principal.userId, page, now);
    const items = result.items.flatMap(({ grants, app }): AuthorizedApp[] => {
      const live = grants.filter((grant) => grant.userId === principal.userId && isLiveGrant(grant, now));
      if (!app || live.length === 0) return [];
      return [
        {
          id: app.clientId,
          application: { clientId: app.clientId, name: app.name, description: app.description, kind: applicationKindOf(app) },
          scopes: ALL_SCOPES.filter((scope) => live.some((grant) => grant.scopes.includes(scope))),
          createdAt: live.map((grant) => grant.createdAt).reduce((oldest, date) => (date < oldest ? date : oldest)),
          lastUsedAt: latest(live.map((grant) => grant.lastUsedAt)),
        },
      ];
    });
    return { ...result, items };
  }

  /**
   * Revokes every grant the person gave the application with this client id; returns once every
   * code, access token and refresh token of them has stopped working. An id that names none of
   * the person's live grants is 404. A grant id (what a row's id was before rows were per
   * application) still names its application.
   */
  async revokeAuthorization(principal: Principal, id: string): Promise<void> {
    const now = this.now();
    let grants = await this.store.grantsOfClient(principal.userId, id);
    if (grants.length === 0) {
      const grant = await this.store.getGrant(id);
      if (grant?.userId === principal.userId) grants = await this.store.grantsOfClient(principal.userId, grant.clientId);
    }
    const mine = grants.filter((grant) => grant.userId === principal.userId);
    if (!mine.some((grant) => isLiveGrant(grant, now))) throw notFound();
    // The dead ones too, so that they leave the person's list.
    await this.store.revokeUserGrants(mine);
  }
}
