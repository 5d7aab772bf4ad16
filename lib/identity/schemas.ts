import * as z from '../zod.js';
import { MIN_PASSWORD_LENGTH } from './identity-service.js';
import { PERSONAL_ACCESS_TOKEN_SCOPES } from './principal.js';

/** Request bodies of the identity endpoints (docs/api-rules.md). */
const newPassword = z
  .string()
  .check(z.minLength(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`), z.maxLength(1024));

export const signInBody = z.strictObject({
  email: z.string().check(z.minLength(1), z.maxLength(320)),
  password: z.string().check(z.minLength(1), z.maxLength(1024)),
  /** Required after an admin reset the password (403 PASSWORD_CHANGE_REQUIRED without it): the sign-in sets it. */
  new_password: z.optional(newPassword),
});

export const changePasswordBody = z.strictObject({
  current_password: z.string().check(z.minLength(1), z.maxLength(1024)),
  new_password: newPassword,
});

export const createUserBody = z.strictObject({
  email: z.email().check(z.maxLength(320)),
  password: z.string().check(z.minLength(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`), z.maxLength(1024)),
  role: z._default(z.enum(['user', 'admin']), 'user'),
});

export const createTokenBody = z.strictObject({
  name: z.string().check(z.trim(), z.minLength(1), z.maxLength(100)),
  expires_in_days: z._default(z.int().check(z.minimum(1), z.maximum(365)), 90),
  /** What the token may do; all three when absent (a token made with a token: its creator's). */
  scopes: z.optional(z.array(z.enum(PERSONAL_ACCESS_TOKEN_SCOPES)).check(z.minLength(1), z.maxLength(3))),
});
