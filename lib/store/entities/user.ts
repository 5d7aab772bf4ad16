import type { User, UserWithPassword } from '../../identity/identity-store.js';
import type { Role } from '../../identity/principal.js';
import { keys } from '../keys.js';
import { asStored, type Item } from './item.js';

/**
 * A user is two items written together: the profile under the user id (listed through the
 * global index) and the email claim, which holds the password hash and makes emails unique.
 */
interface StoredProfile {
  id: string;
  email: string;
  role: Role;
  created_at: string;
}

interface StoredEmailClaim {
  user_id: string;
  email: string;
  role: Role;
  created_at: string;
  password_hash: string;
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
  }),
  emailItem: (user: UserWithPassword): Item => ({
    ...keys.email(user.email),
    entity: 'email',
    user_id: user.id,
    email: user.email,
    role: user.role,
    created_at: user.createdAt,
    password_hash: user.passwordHash,
  }),
  fromProfile(item: Item): User {
    const stored = asStored<StoredProfile>(item);
    return { id: stored.id, email: stored.email, role: stored.role, createdAt: stored.created_at };
  },
  fromEmailClaim(item: Item): UserWithPassword {
    const stored = asStored<StoredEmailClaim>(item);
    return { id: stored.user_id, email: stored.email, role: stored.role, createdAt: stored.created_at, passwordHash: stored.password_hash };
  },
};
