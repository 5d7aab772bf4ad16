import { createHash } from 'node:crypto';
import { RateLimitedError } from '../errors.js';
import { UNUSED_REGISTRATION_LIFETIME_SECONDS } from './client-registration.js';
import { type FetchedDocument, refused } from './client-metadata-fetch.js';
import { UNOWNED } from './first-party-client.js';
import { isoAfter } from './lifetimes.js';
import type { OAuthApp } from './oauth-store.js';
import { type RedirectUriRules, redirectUriProblem } from './redirect-uris.js';
import { isReservedAppName } from './reserved-names.js';

export { isClientIdUrl } from './client-id-url.js';

/** A client metadata document's URL is at most this long: it is the client item's key. */
const MAX_REDIRECT_URIS = 10;
/** Cache bounds (docs/oauth.md, "Client metadata documents"): a document is fetched at most once a minute, and again at least daily. */
const MIN_CACHE_SECONDS = 60;
const MAX_CACHE_SECONDS = 86_400;
/** Used when the document says nothing of caching. */
const DEFAULT_CACHE_SECONDS = 300;
/** Fetches per minute, per container: of one client_id, and on behalf of one requesting address. */
export const FETCHES_PER_CLIENT_PER_MINUTE = 5;
export const FETCHES_PER_ADDRESS_PER_MINUTE = 20;
const CACHE_ENTRIES = 500;

const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

export interface ClientMetadataStore {
  /** Writes (or refreshes) the application and client a document describes; keeps an authorized one from expiring. */
  saveDocumentClient(app: OAuthApp): Promise<void>;
}

/** The id of the application behind a document: derived from its URL, so every instance names it alike. */
export function documentAppId(clientId: string): string {
  const hash = createHash('sha256').update(clientId).digest('hex');
  return `${hash.slice(0, 8)}-${hash.slice(8, 12)}-8${hash.slice(13, 16)}-8${hash.slice(17, 20)}-${hash.slice(20, 32)}`;
}

/**
 * The document's fields this server uses, checked (section 4 and 8.1 of the draft): `client_id`
 * equal to the URL, character for character; `redirect_uris` under the rules of registered
 * applications; a `client_name` that does not pass for this service's own CLI; and no client
 * authentication but `none`, since a document cannot carry a shared secret.
 */
export function documentApp(clientId: string, text: string, rules: RedirectUriRules, now: Date): OAuthApp {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw refused('is not valid JSON');
  }
  if (!isJsonObject(document)) throw refused('is not a JSON object');
  const fields = document;
  if (fields.client_id !== clientId) throw refused('names another client_id than its own URL');
  const redirectUris = fields.redirect_uris;
  if (!Array.isArray(redirectUris) || redirectUris.length === 0 || redirectUris.length > MAX_REDIRECT_URIS) {
    throw refused(`must list 1 to ${MAX_REDIRECT_URIS} redirect_uris`);
  }
  const uris: string[] = [];
  for (const uri of redirectUris) {
    const problem = typeof uri === 'string' ? redirectUriProblem(uri, rules) : 'must be a string';
    if (problem || typeof uri !== 'string') throw refused(`lists a redirect URI that ${problem}: ${String(uri).slice(0, 200)}`);
    uris.push(uri);
  }
  const method = fields.token_endpoint_auth_method ?? 'none';
  if (method !== 'none')
    throw refused('asks for token_endpoint_auth_method other than none, which this server does not accept for documents');
  const name =
    typeof fields.client_name === 'string' && fields.client_name.trim() ? fields.client_name.trim().slice(0, 100) : new URL(clientId).host;
  if (isReservedAppName(name)) throw refused("names itself like this service's own CLI");
  return {
    id: documentAppId(clientId),
    clientId,
    ownerId: UNOWNED,
    name,
    description: '',
    redirectUris: uris,
    tokenEndpointAuthMethod: 'none',
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
    expiresAt: isoAfter(now, UNUSED_REGISTRATION_LIFETIME_SECONDS),
  };
}

/** Counts events per key in one-minute windows, in this container's memory. */
class PerMinute {
  private window = 0;
  private counts = new Map<string, number>();

  constructor(private readonly limit: number) {}

  take(key: string, now: Date): boolean {
    const window = Math.floor(now.getTime() / 60_000);
    if (window !== this.window) {
      this.window = window;
      this.counts = new Map();
    }
    const count = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, count);
    return count <= this.limit;
  }
}

/**
 * Client metadata documents (docs/oauth.md, "Client metadata documents"): an https `client_id` is
 * fetched, checked and kept as an application nobody owns, and cached per its Cache-Control
 * within 1 minute and 1 day. Fetches are bounded per client_id and per requesting address.
 */
export class ClientMetadataResolver {
  private readonly cache = new Map<string, { app: OAuthApp; until: number }>();
  private readonly perClient = new PerMinute(FETCHES_PER_CLIENT_PER_MINUTE);
  private readonly perAddress = new PerMinute(FETCHES_PER_ADDRESS_PER_MINUTE);

  constructor(
    private readonly fetchDocument: (url: URL) => Promise<FetchedDocument>,
    private readonly store: ClientMetadataStore,
    private readonly redirectRules: RedirectUriRules,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** The application the document at `clientId` describes, fetched unless cached; `invalid_client` when it cannot be used. */
  async resolve(clientId: string, requesterAddress: string): Promise<OAuthApp> {
    const now = this.now();
    const cached = this.cache.get(clientId);
    if (cached && cached.until > now.getTime()) return cached.app;
    if (!this.perClient.take(clientId, now) || !this.perAddress.take(requesterAddress, now)) {
      throw new RateLimitedError('Too many client metadata document fetches; try again in a minute', 60);
    }
    const fetched = await this.fetchDocument(new URL(clientId));
    const app = documentApp(clientId, fetched.text, this.redirectRules, now);
    await this.store.saveDocumentClient(app);
    const seconds = fetched.maxAgeSeconds === undefined ? DEFAULT_CACHE_SECONDS : fetched.maxAgeSeconds;
    if (seconds > 0) {
      if (this.cache.size >= CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(clientId, { app, until: now.getTime() + Math.min(Math.max(seconds, MIN_CACHE_SECONDS), MAX_CACHE_SECONDS) * 1000 });
    }
    return app;
  }
}
