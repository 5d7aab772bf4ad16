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

const MAX_TOKEN_NAME_LENGTH = 100;
const MAX_TOKEN_DAYS = 365;
const scopeNames = PERSONAL_ACCESS_TOKEN_SCOPES.join(', ');

/** The messages say what the field takes, in the words of the API's other fields (docs/api-rules.md). */
export const createTokenBody = z.strictObject({
  name: z
    .string('must be a string')
    .check(
      z.trim(),
      z.minLength(1, 'must not be empty'),
      z.maxLength(MAX_TOKEN_NAME_LENGTH, `must be at most ${MAX_TOKEN_NAME_LENGTH} characters`),
    ),
  expires_in_days: z._default(
    z
      .int(`must be a whole number of days from 1 to ${MAX_TOKEN_DAYS}`)
      .check(
        z.minimum(1, `must be a whole number of days from 1 to ${MAX_TOKEN_DAYS}`),
        z.maximum(MAX_TOKEN_DAYS, `must be a whole number of days from 1 to ${MAX_TOKEN_DAYS}`),
      ),
    90,
  ),
  /** What the token may do; all three when absent (a token made with a token: its creator's). */
  scopes: z.optional(
    z
      .array(z.enum(PERSONAL_ACCESS_TOKEN_SCOPES, { error: `must be one of ${scopeNames}` }), `must be a list of ${scopeNames}`)
      .check(
        z.minLength(1, `must name at least one of ${scopeNames}`),
        z.maxLength(PERSONAL_ACCESS_TOKEN_SCOPES.length, `must name each of ${scopeNames} at most once`),
      ),
  ),
});
