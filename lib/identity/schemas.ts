import * as z from 'zod';
import { MIN_PASSWORD_LENGTH } from './identity-service.js';

/** Request bodies of the identity endpoints (docs/api-rules.md). */
export const signInBody = z.strictObject({
  email: z.string().min(1).max(320),
  password: z.string().min(1).max(1024),
});

export const createUserBody = z.strictObject({
  email: z.email().max(320),
  password: z.string().min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`).max(1024),
  role: z.enum(['user', 'admin']).default('user'),
});

export const createTokenBody = z.strictObject({
  name: z.string().trim().min(1).max(100),
  expires_in_days: z.int().min(1).max(365).default(90),
});
