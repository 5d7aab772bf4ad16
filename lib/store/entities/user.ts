import type { SessionOfUser, User, UserStatus, UserWithPassword } from '../../identity/identity-store.js';
import type { Role } from '../../identity/principal.js';
import { keys, TTL_ATTRIBUTE, ttlEpochSeconds } from '../keys.js';
import { asStored, type Item } from './item.js';

/**
 * A user is two items written together: the profile under the user id (listed through the
 * global index) and the email claim, which holds the password hash and makes emails unique.
 * Both carry the status and the reset flag, written together: sign-in reads the claim, the
 * admin's list the profiles. A session's entry in the user's partition lets the account end it.
 */
interface StoredProfile {
  id: string;
  email: string;
  role: Role;
  created_at: string;
  /** Absent on accounts from before issue 37: active. */
  status?: UserStatus;
  must_change_password?: boolean;
}

interface StoredEmailClaim {
  user_id: string;
  email: string;
  role: Role;
  created_at: string;
  password_hash: string;
  status?: UserStatus;
  must_change_password?: boolean;
}

export const userEntity = {
  key: keys.user,
  emailKey: keys.email,
  profileItem: (user: User): Item => ({
    ...keys.user(user.id),
    ...keys.allUsers(user.id),
    entity: 'user',
    id: user.id,
    email: user.email,
    role: user.role,
    created_at: user.createdAt,
    status: user.status,
    must_change_password: user.mustChangePassword,
  }),
  emailItem: (user: UserWithPassword): Item => ({
    ...keys.email(user.email),
    entity: 'email',
    user_id: user.id,
    email: user.email,
    role: user.role,
    created_at: user.createdAt,
    password_hash: user.passwordHash,
    status: user.status,
    must_change_password: user.mustChangePassword,
  }),
  fromProfile(item: Item): User {
    const stored = asStored<StoredProfile>(item);
    return {
      id: stored.id,
      email: stored.email,
      role: stored.role,
      createdAt: stored.created_at,
      status: stored.status ?? 'active',
      mustChangePassword: stored.must_change_password ?? false,
    };
  },
  fromEmailClaim(item: Item): UserWithPassword {
    const stored = asStored<StoredEmailClaim>(item);
    return {
      id: stored.user_id,
      email: stored.email,
      role: stored.role,
      createdAt: stored.created_at,
      passwordHash: stored.password_hash,
      status: stored.status ?? 'active',
      mustChangePassword: stored.must_change_password ?? false,
    };
  },
};

/** A session's entry under its user (`USER#<id>`, `SESSION#<hash>`), expiring with it. */
export const sessionOfUserEntity = {
  key: keys.sessionOfUser,
  toItem: (userId: string, session: SessionOfUser): Item => ({
    ...keys.sessionOfUser(userId, session.tokenHash),
    entity: 'session_of_user',
    token_hash: session.tokenHash,
    expires_at: session.expiresAt,
    [TTL_ATTRIBUTE]: ttlEpochSeconds(session.expiresAt),
  }),
  fromItem(item: Item): SessionOfUser {
    const stored = asStored<{ token_hash: string; expires_at: string }>(item);
    return { tokenHash: stored.token_hash, expiresAt: stored.expires_at };
  },
};
