import { BadRequestError, NotFoundError, RateLimitedError, UnauthorizedError } from '../errors.js';
import { newId } from '../ids.js';
import type { Page, PageRequest } from '../page.js';
import { type Authentication, CredentialAuthenticator, csrfTokenFor } from './authentication.js';
import type { IdentityStore, PersonalAccessToken, User } from './identity-store.js';
import { DECOY_PASSWORD_HASH, hashPassword, verifyPassword } from './passwords.js';
import { ALL_SCOPES, type Principal, type Role } from './principal.js';
import { CREDENTIAL_PREFIX, newSecret, sha256Hex } from './secrets.js';

export const SESSION_LIFETIME_SECONDS = 12 * 60 * 60;
export const LOGIN_FAILURE_LIMIT = 5;
export const MIN_PASSWORD_LENGTH = 12;
export const LOGIN_LOCKOUT_SECONDS = 15 * 60;
export interface SignedInSession {
  token: string;
  csrfToken: string;
  expiresAt: string;
  user: User;
}

export interface IssuedPersonalAccessToken {
  id: string;
  name: string;
  token: string;
  createdAt: string;
  expiresAt: string;
}

export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

export class IdentityService {
  private readonly authenticator: CredentialAuthenticator;

  constructor(
    private readonly store: IdentityStore,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.authenticator = new CredentialAuthenticator(store, now);
  }

  async createUser(input: { email: string; password: string; role?: Role }): Promise<User> {
    if (input.password.length < MIN_PASSWORD_LENGTH) {
      throw new BadRequestError(`The password must be at least ${MIN_PASSWORD_LENGTH} characters`);
    }
    const user = {
      id: newId(),
      email: normalizeEmail(input.email),
      role: input.role ?? 'user',
      createdAt: this.now().toISOString(),
    };
    await this.store.createUser({ ...user, passwordHash: await hashPassword(input.password) });
    return user;
  }

  async getUser(userId: string): Promise<User> {
    const user = await this.store.getUser(userId);
    if (!user) throw new NotFoundError('User not found');
    return user;
  }

  listUsers(page: PageRequest): Promise<Page<User>> {
    return this.store.listUsers(page);
  }

  /**
   * Email and password to a session. Five failures for one email within 15 minutes lock
   * that email for 15 minutes; a wrong email and a wrong password look and take the same.
   */
  async signIn(emailInput: string, password: string): Promise<SignedInSession> {
    const email = normalizeEmail(emailInput);
    const now = this.now();
    const [attempt, user] = await Promise.all([
      this.store.reserveLoginAttempt(email, now, LOGIN_LOCKOUT_SECONDS, LOGIN_FAILURE_LIMIT),
      this.store.findUserByEmail(email),
    ]);
    if (!attempt.allowed) {
      throw new RateLimitedError('Too many failed sign-ins for this email; try again later', attempt.retryAfterSeconds);
    }
    const passwordMatches = await verifyPassword(password, user?.passwordHash ?? DECOY_PASSWORD_HASH);
    if (!user || !passwordMatches) {
      if (attempt.attempt >= LOGIN_FAILURE_LIMIT) {
        await this.store.lockLogin(email, new Date(now.getTime() + LOGIN_LOCKOUT_SECONDS * 1000), LOGIN_FAILURE_LIMIT);
      }
      throw new UnauthorizedError('Wrong email or password');
    }
    await this.store.clearLoginAttempts(email);

    const token = newSecret(CREDENTIAL_PREFIX.session);
    const expiresAt = new Date(now.getTime() + SESSION_LIFETIME_SECONDS * 1000).toISOString();
    await this.store.putCredential({
      tokenHash: sha256Hex(token),
      kind: 'session',
      userId: user.id,
      role: user.role,
      scopes: ALL_SCOPES,
      expiresAt,
    });
    const { passwordHash: _passwordHash, ...publicUser } = user;
    return { token, csrfToken: csrfTokenFor(token), expiresAt, user: publicUser };
  }

  async signOut(principal: Principal): Promise<void> {
    await this.store.deleteCredential(principal.credentialHash);
  }

  /** Any presented bearer credential to a principal; `undefined` when it is not a live one. */
  authenticate(token: string): Promise<Authentication | undefined> {
    return this.authenticator.authenticate(token);
  }

  async createPersonalAccessToken(
    principal: Principal,
    input: { name: string; expiresInDays: number },
  ): Promise<IssuedPersonalAccessToken> {
    const now = this.now();
    const token = newSecret(CREDENTIAL_PREFIX.personalAccessToken);
    const tokenHash = sha256Hex(token);
    // A PAT made with a PAT expires no later than its creator, so a leaked PAT cannot mint a
    // longer-lived one; a session keeps the 1..365 day rule (README, "Security").
    const requested = now.getTime() + input.expiresInDays * 86_400_000;
    const expiresAtMs = principal.kind === 'pat' ? Math.min(requested, Date.parse(principal.expiresAt)) : requested;
    const metadata: PersonalAccessToken = {
      id: newId(now.getTime()),
      userId: principal.userId,
      name: input.name,
      tokenHash,
      createdAt: now.toISOString(),
      expiresAt: new Date(expiresAtMs).toISOString(),
      lastUsedAt: null,
    };
    await this.store.createPersonalAccessToken(metadata, {
      tokenHash,
      kind: 'pat',
      userId: principal.userId,
      role: principal.role,
      scopes: ALL_SCOPES,
      expiresAt: metadata.expiresAt,
      tokenId: metadata.id,
    });
    return { id: metadata.id, name: metadata.name, token, createdAt: metadata.createdAt, expiresAt: metadata.expiresAt };
  }

  /** Live tokens only: an expired one lingers in the table until TTL removes it, at no set time. */
  async listPersonalAccessTokens(principal: Principal, page: PageRequest): Promise<Page<PersonalAccessToken>> {
    const listed = await this.store.listPersonalAccessTokens(principal.userId, page);
    const now = this.now().getTime();
    return { ...listed, items: listed.items.filter((token) => Date.parse(token.expiresAt) > now) };
  }

  async deletePersonalAccessToken(principal: Principal, tokenId: string): Promise<void> {
    const deleted = await this.store.deletePersonalAccessToken(principal.userId, tokenId);
    if (!deleted) throw new NotFoundError('Token not found');
  }
}
