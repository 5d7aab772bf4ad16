// Over 300 lines because sign-in with its throttling by address and device, sessions, personal access tokens and
// account administration share the password and credential rules held here.
import {
  AccountDisabledError,
  BadRequestError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  PasswordChangeRequiredError,
  RateLimitedError,
  UnauthorizedError,
} from '../errors.js';
import { newId } from '../ids.js';
import type { Page, PageRequest } from '../page.js';
import { type Authentication, CredentialAuthenticator, csrfTokenFor } from './authentication.js';
import { deviceCookieAfterSignIn, deviceFor } from './device-cookie.js';
import type { EmailFailures, IdentityStore, LoginSource, PersonalAccessToken, User } from './identity-store.js';
import { DECOY_PASSWORD_HASH, hashPassword, needsRehash, verifyPassword } from './passwords.js';
import { ALL_SCOPES, PERSONAL_ACCESS_TOKEN_SCOPES, type PersonalAccessTokenScope, type Principal, type Role } from './principal.js';
import { CREDENTIAL_PREFIX, newSecret, sha256Hex } from './secrets.js';
import { randomBytes } from 'node:crypto';

export const SESSION_LIFETIME_SECONDS = 12 * 60 * 60;
export const MIN_PASSWORD_LENGTH = 12;
/**
 * Sign-in throttling (docs/api-rules.md, "Sign-in throttling"): failures lock an email only for
 * the address they came from; across addresses they only slow the email down for unknown devices,
 * and a device that signed in as the email before has a limit of its own, so nobody can keep a
 * person out of their own account from somewhere else.
 */
export const LOGIN_FAILURE_LIMIT = 5;
export const LOGIN_LOCKOUT_SECONDS = 15 * 60;
/** Failures a device that signed in as an email before may make for it within the window before it is locked. */
export const DEVICE_FAILURE_LIMIT = 5;
/** Failures for an email from all addresses within the window before attempts for it are spaced. */
export const EMAIL_SLOWDOWN_THRESHOLD = 10;
/** The spacing doubles from 1 s with each failure past the threshold, up to this. */
export const EMAIL_SLOWDOWN_MAX_SECONDS = 60;

/** The spacing between attempts for an email with this many failures in the window; 0 below the threshold. */
export function emailSlowdownSeconds(failures: number): number {
  if (failures < EMAIL_SLOWDOWN_THRESHOLD) return 0;
  return Math.min(2 ** (failures - EMAIL_SLOWDOWN_THRESHOLD), EMAIL_SLOWDOWN_MAX_SECONDS);
}
export interface SignedInSession {
  token: string;
  csrfToken: string;
  expiresAt: string;
  user: User;
  /** The device cookie's new value (lib/identity/device-cookie.ts); absent where there is no key. */
  deviceCookie?: string;
}

export interface IssuedPersonalAccessToken {
  id: string;
  name: string;
  token: string;
  createdAt: string;
  expiresAt: string;
  scopes: readonly PersonalAccessTokenScope[];
  parentId: string | null;
}

export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

function checkPasswordLength(password: string, field: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) {
    const rule = `must be at least ${MIN_PASSWORD_LENGTH} characters`;
    throw new BadRequestError(`The ${field.replace('_', ' ')} ${rule}`, [{ field, message: rule }]);
  }
}

export class IdentityService {
  private readonly authenticator: CredentialAuthenticator;

  constructor(
    private readonly store: IdentityStore,
    private readonly now: () => Date = () => new Date(),
    /** Signs device cookies; without it every sign-in comes from an unknown device. */
    private readonly deviceCookieKey?: () => Promise<Uint8Array>,
    /** Revokes every OAuth authorization of an account (lib/wiring/accounts.ts); the OAuth area's, so given. */
    private readonly revokeAuthorizations?: (userId: string) => Promise<void>,
  ) {
    this.authenticator = new CredentialAuthenticator(store, now);
  }

  async createUser(input: { email: string; password: string; role?: Role }): Promise<User> {
    checkPasswordLength(input.password, 'password');
    const user: User = {
      id: newId(),
      email: normalizeEmail(input.email),
      role: input.role ?? 'user',
      createdAt: this.now().toISOString(),
      status: 'active',
      mustChangePassword: false,
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
   * Email and password to a session, for a client at `address` (API Gateway's source IP, never a
   * header the client sets) presenting `deviceCookie` (the device cookie's value, if any). A
   * device that signed in as this email before (lib/identity/device-cookie.ts, within its
   * lifetime) is held back by its own failures only: five within 15 minutes lock that device for
   * 15 minutes, and nothing anyone does elsewhere keeps it out; its failures still count for the
   * email, so a stolen copy's guesses slow unknown devices down and are seen. Any other client: five failures for one email from one
   * address within 15 minutes lock that email for that address for 15 minutes, and failures from
   * every address together slow the email down for unknown devices: from the tenth within the
   * window on, one attempt per 1, 2, 4 … 60 seconds. A wrong email and a wrong password look and
   * take the same. A success hands out a new device cookie value for the email.
   */
  async signIn(
    emailInput: string,
    password: string,
    address: string,
    deviceCookie?: string,
    /** Required when an admin reset the password (then the sign-in sets it). */
    newPassword?: string,
  ): Promise<SignedInSession> {
    const email = normalizeEmail(emailInput);
    const now = this.now();
    const [emailFailures, user, deviceKey] = await Promise.all([
      this.store.getEmailFailures(email),
      this.store.findUserByEmail(email),
      this.deviceKey(),
    ]);
    const deviceId = deviceKey ? deviceFor(deviceKey, deviceCookie, email, now) : undefined;
    const source: LoginSource = deviceId ? { device: deviceId } : { address };
    // A known device skips the slow-down, which only counts and holds back unknown ones.
    if (!deviceId) await this.awaitSlowdown(email, emailFailures, now);
    // After the slow-down, so that being slowed down never counts against the person's own address.
    const limit = deviceId ? DEVICE_FAILURE_LIMIT : LOGIN_FAILURE_LIMIT;
    const attempt = await this.store.reserveLoginAttempt(email, source, now, LOGIN_LOCKOUT_SECONDS, limit);
    if (!attempt.allowed) {
      throw new RateLimitedError(
        deviceId
          ? 'Too many failed sign-ins for this email on this device; try again later'
          : 'Too many failed sign-ins for this email from this address; try again later',
        attempt.retryAfterSeconds,
      );
    }
    const passwordMatches = await verifyPassword(password, user?.passwordHash ?? DECOY_PASSWORD_HASH);
    if (!user || !passwordMatches) {
      // Past the threshold the email also rests from this failure on, not only from this attempt's start.
      const failedAt = this.now();
      const spacingSeconds = emailSlowdownSeconds((emailFailures?.failures ?? 0) + 1);
      await Promise.all([
        // A known device's failures count for the email too (a stolen device cookie guessing is seen and
        // slows unknown devices down), though the known device itself is never held back by them.
        this.store.recordEmailFailure(
          email,
          failedAt,
          LOGIN_LOCKOUT_SECONDS,
          spacingSeconds > 0 ? new Date(failedAt.getTime() + spacingSeconds * 1000) : undefined,
        ),
        attempt.attempt >= limit
          ? this.store.lockLogin(email, source, new Date(now.getTime() + LOGIN_LOCKOUT_SECONDS * 1000), limit)
          : undefined,
      ]);
      throw new UnauthorizedError('Wrong email or password');
    }
    // Only a right password learns that the account is disabled or must change its password.
    if (user.status === 'disabled') throw new AccountDisabledError();
    if (user.mustChangePassword) {
      if (newPassword === undefined) throw new PasswordChangeRequiredError();
      checkPasswordLength(newPassword, 'new_password');
      if (newPassword === password) {
        throw new BadRequestError('The new password must differ from the one an admin set', [
          { field: 'new_password', message: 'must differ from the password an admin set' },
        ]);
      }
    }
    await Promise.all([
      this.store.clearLoginAttempts(email, source),
      user.mustChangePassword
        ? hashPassword(newPassword!).then(async (chosen) => {
            // Another sign-in that set it first wins; this one must then sign in with the new password.
            if (!(await this.store.setPassword(user, chosen, false, user.passwordHash)))
              throw new UnauthorizedError('Wrong email or password');
          })
        : // A hash made with older parameters is replaced now that the password is at hand (issue 18).
          needsRehash(user.passwordHash)
          ? hashPassword(password).then((upgraded) => this.store.replacePasswordHash(email, user.passwordHash, upgraded))
          : undefined,
    ]);

    const token = newSecret(CREDENTIAL_PREFIX.session);
    const expiresAt = new Date(now.getTime() + SESSION_LIFETIME_SECONDS * 1000).toISOString();
    const created = await this.store.createSession(
      { tokenHash: sha256Hex(token), kind: 'session', userId: user.id, role: user.role, scopes: ALL_SCOPES, expiresAt },
      email,
    );
    // Disabled between the read and the write: the disable won.
    if (!created) throw new AccountDisabledError();
    const { passwordHash: _passwordHash, ...signedIn } = user;
    const publicUser: User = { ...signedIn, mustChangePassword: false };
    return {
      token,
      csrfToken: csrfTokenFor(token),
      expiresAt,
      user: publicUser,
      ...(deviceKey ? { deviceCookie: deviceCookieAfterSignIn(deviceKey, deviceCookie, email, now) } : {}),
    };
  }

  /** The device cookies' key; none (every device unknown) where the deployment has none to give. */
  private async deviceKey(): Promise<Uint8Array | undefined> {
    if (!this.deviceCookieKey) return undefined;
    try {
      return await this.deviceCookieKey();
    } catch {
      return undefined;
    }
  }

  /** Refuses an attempt while the email is slowed down and another attempt holds the slot. */
  private async awaitSlowdown(email: string, failures: EmailFailures | undefined, now: Date): Promise<void> {
    if (!failures || Date.parse(failures.windowEndsAt) <= now.getTime()) return;
    const spacingSeconds = emailSlowdownSeconds(failures.failures);
    if (spacingSeconds === 0) return;
    const claim = await this.store.claimSlowedLoginAttempt(email, now, new Date(now.getTime() + spacingSeconds * 1000));
    if (!claim.claimed) {
      throw new RateLimitedError('Too many failed sign-ins for this email; try again shortly', claim.retryAfterSeconds);
    }
  }

  /**
   * Changes the caller's own password, given the current one (counted against sign-in's limit for
   * the address, so a stolen session cannot guess it), and ends every other session of the account.
   */
  async changePassword(principal: Principal, currentPassword: string, newPassword: string, address: string): Promise<void> {
    checkPasswordLength(newPassword, 'new_password');
    const profile = await this.getUser(principal.userId);
    const now = this.now();
    const source: LoginSource = { address };
    const attempt = await this.store.reserveLoginAttempt(profile.email, source, now, LOGIN_LOCKOUT_SECONDS, LOGIN_FAILURE_LIMIT);
    if (!attempt.allowed) {
      throw new RateLimitedError('Too many wrong passwords for this account from this address; try again later', attempt.retryAfterSeconds);
    }
    const user = await this.store.findUserByEmail(profile.email);
    if (!user || !(await verifyPassword(currentPassword, user.passwordHash))) {
      if (attempt.attempt >= LOGIN_FAILURE_LIMIT) {
        await this.store.lockLogin(profile.email, source, new Date(now.getTime() + LOGIN_LOCKOUT_SECONDS * 1000), LOGIN_FAILURE_LIMIT);
      }
      throw new BadRequestError('The current password is wrong', [{ field: 'current_password', message: 'is wrong' }]);
    }
    await this.store.clearLoginAttempts(profile.email, source);
    if (!(await this.store.setPassword(user, await hashPassword(newPassword), false, user.passwordHash))) {
      throw new ConflictError('The password changed meanwhile; sign in again');
    }
    await this.endSessions(user.id, principal.credentialHash);
  }

  /**
   * An admin's reset: a generated password, shown once to the admin, that the person must replace
   * at their next sign-in; every session of the account ends.
   */
  async resetPassword(userId: string, admin?: Principal): Promise<{ user: User; temporaryPassword: string }> {
    const user = await this.getUser(userId);
    const temporaryPassword = randomBytes(18).toString('base64url');
    if (!(await this.store.setPassword(user, await hashPassword(temporaryPassword), true))) throw new NotFoundError('User not found');
    // An admin resetting their own password keeps the session they did it with.
    await this.endSessions(user.id, user.id === admin?.userId ? admin.credentialHash : undefined);
    return { user: { ...user, mustChangePassword: true }, temporaryPassword };
  }

  /**
   * Disables an account: no sign-in, and its sessions, personal access tokens and OAuth
   * authorizations stop at once (each is a credential item deleted, or a grant revoked: the one
   * read that authenticates them finds nothing). Its tokens come back on enable; its sessions and
   * authorizations do not (docs/api-rules.md, "Accounts").
   */
  async disableUser(userId: string, admin?: Principal): Promise<User> {
    if (userId === admin?.userId) throw new ConflictError('An admin cannot disable their own account');
    const user = await this.getUser(userId);
    // The status first: a session or token created meanwhile either fails its check or is found below.
    if (!(await this.store.setUserStatus(user, 'disabled'))) throw new NotFoundError('User not found');
    await Promise.all([this.endSessions(user.id), this.store.suspendPersonalAccessTokens(user.id), this.revokeAuthorizations?.(user.id)]);
    return { ...user, status: 'disabled' };
  }

  async enableUser(userId: string): Promise<User> {
    const user = await this.getUser(userId);
    if (!(await this.store.setUserStatus(user, 'active'))) throw new NotFoundError('User not found');
    await this.store.restorePersonalAccessTokens(user.id, user.role);
    return { ...user, status: 'active' };
  }

  /** Every session of the account but `keep` (the caller's own, when it changes its password). */
  private async endSessions(userId: string, keep?: string): Promise<void> {
    const sessions = await this.store.listSessionsOfUser(userId);
    await this.store.deleteSessions(
      userId,
      sessions.filter((session) => session.tokenHash !== keep),
    );
  }

  /** The account's user by email, for the operator's script. */
  async findUserByEmail(email: string): Promise<User | undefined> {
    const found = await this.store.findUserByEmail(normalizeEmail(email));
    if (!found) return undefined;
    const { passwordHash: _passwordHash, ...user } = found;
    return user;
  }

  async signOut(principal: Principal): Promise<void> {
    await this.store.deleteCredential(principal.credentialHash);
  }

  /** Any presented bearer credential to a principal; `undefined` when it is not a live one. */
  authenticate(token: string): Promise<Authentication | undefined> {
    return this.authenticator.authenticate(token);
  }

  /**
   * A PAT with the scopes asked for (all three by default). A PAT made with a PAT gets at most its
   * creator's scopes, expires no later than it, and dies with it: deleting the creator deletes it
   * (docs/security.md, "Security").
   */
  async createPersonalAccessToken(
    principal: Principal,
    input: { name: string; expiresInDays: number; scopes?: readonly PersonalAccessTokenScope[] },
  ): Promise<IssuedPersonalAccessToken> {
    const now = this.now();
    const createdByToken = principal.kind === 'pat';
    const scopes = PERSONAL_ACCESS_TOKEN_SCOPES.filter((scope) =>
      (input.scopes ?? (createdByToken ? principal.scopes : PERSONAL_ACCESS_TOKEN_SCOPES)).includes(scope),
    );
    if (createdByToken) {
      const beyond = scopes.filter((scope) => !principal.scopes.includes(scope));
      if (beyond.length > 0) throw new ForbiddenError(`A token cannot grant scopes it lacks: ${beyond.join(', ')}`);
    }
    const token = newSecret(CREDENTIAL_PREFIX.personalAccessToken);
    const tokenHash = sha256Hex(token);
    // A PAT made with a PAT expires no later than its creator, so a leaked PAT cannot mint a
    // longer-lived one; a session keeps the 1..365 day rule (docs/security.md, "Security").
    const requested = now.getTime() + input.expiresInDays * 86_400_000;
    const expiresAtMs = createdByToken ? Math.min(requested, Date.parse(principal.expiresAt)) : requested;
    const id = newId(now.getTime());
    const parentId = createdByToken ? (principal.tokenId ?? null) : null;
    // A token from before lineage was recorded is its own root.
    const lineage = `${parentId ? (principal.lineage ?? `${parentId}/`) : ''}${id}/`;
    const metadata: PersonalAccessToken = {
      id,
      userId: principal.userId,
      name: input.name,
      tokenHash,
      createdAt: now.toISOString(),
      expiresAt: new Date(expiresAtMs).toISOString(),
      lastUsedAt: null,
      scopes,
      parentId,
      lineage,
    };
    await this.store.createPersonalAccessToken(metadata, {
      tokenHash,
      kind: 'pat',
      userId: principal.userId,
      role: principal.role,
      scopes,
      expiresAt: metadata.expiresAt,
      tokenId: metadata.id,
      lineage,
    });
    return {
      id: metadata.id,
      name: metadata.name,
      token,
      createdAt: metadata.createdAt,
      expiresAt: metadata.expiresAt,
      scopes,
      parentId,
    };
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
