import { RateLimitedError } from '../errors.js';
import { CREDENTIAL_PREFIX, newSecret, sha256Hex } from '../identity/secrets.js';
import { newId } from '../ids.js';
import { UNOWNED } from './first-party-client.js';
import { isoAfter } from './lifetimes.js';
import type { OAuthApp, TokenEndpointAuthMethod } from './oauth-store.js';

/**
 * How long a dynamically registered client lives unless someone authorizes it: one day, enough
 * for an agent to send its person through the consent page, short enough that registrations
 * nobody approved do not pile up (docs/oauth.md, "Dynamic registration").
 */
export const UNUSED_REGISTRATION_LIFETIME_SECONDS = 86_400;
/** Registrations one client address may make per window; past it, 429 until the window ends. */
export const REGISTRATIONS_PER_ADDRESS = 10;
export const REGISTRATION_WINDOW_SECONDS = 3600;

/** What RFC 7591 section 2 metadata this server keeps of a registration. */
export interface ClientRegistrationRequest {
  clientName: string;
  redirectUris: string[];
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
}

export interface ClientRegistrationStore {
  /** Writes the application and its client together, both expiring at `app.expiresAt`. */
  createApp(app: OAuthApp, secretHash: string | undefined): Promise<void>;
  /** Counts one registration from the address in the window starting at `windowStart` (epoch seconds); the count so far. */
  countRegistration(addressHash: string, windowStart: number, windowEndsAt: string): Promise<number>;
}

/**
 * Dynamic client registration (RFC 7591 section 3): an application nobody owns, public or
 * confidential, with redirect URIs under the rules of registered applications. It expires after
 * a day unless someone authorizes it; then it lives like any application, listed under the
 * authorized applications of whoever approved it, who can revoke it there.
 */
export class ClientRegistrationService {
  constructor(
    private readonly store: ClientRegistrationStore,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async register(request: ClientRegistrationRequest, sourceAddress: string): Promise<{ app: OAuthApp; clientSecret: string | null }> {
    const now = this.now();
    const windowStart = Math.floor(now.getTime() / 1000 / REGISTRATION_WINDOW_SECONDS) * REGISTRATION_WINDOW_SECONDS;
    const windowEndsAt = new Date((windowStart + REGISTRATION_WINDOW_SECONDS) * 1000).toISOString();
    // Counted before anything is written, by the hash of the address, which is not stored in plain.
    const count = await this.store.countRegistration(sha256Hex(sourceAddress), windowStart, windowEndsAt);
    if (count > REGISTRATIONS_PER_ADDRESS) {
      throw new RateLimitedError(
        `At most ${REGISTRATIONS_PER_ADDRESS} client registrations an hour from one address`,
        (Date.parse(windowEndsAt) - now.getTime()) / 1000,
      );
    }
    const app: OAuthApp = {
      id: newId(now.getTime()),
      clientId: newId(now.getTime()),
      ownerId: UNOWNED,
      name: request.clientName,
      description: '',
      redirectUris: request.redirectUris,
      tokenEndpointAuthMethod: request.tokenEndpointAuthMethod,
      createdAt: now.toISOString(),
      updatedAt: now.toISOString(),
      expiresAt: isoAfter(now, UNUSED_REGISTRATION_LIFETIME_SECONDS),
    };
    const clientSecret = request.tokenEndpointAuthMethod === 'none' ? null : newSecret(CREDENTIAL_PREFIX.clientSecret);
    await this.store.createApp(app, clientSecret === null ? undefined : sha256Hex(clientSecret));
    return { app, clientSecret };
  }
}
