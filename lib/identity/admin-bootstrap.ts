import { randomBytes } from 'node:crypto';
import { ConflictError } from '../errors.js';
import type { IdentityService } from './identity-service.js';

/**
 * Creates the first admin unless the email is already taken. Without a password one is
 * generated, returned once for the operator to note, and never stored in plain text.
 */
export async function ensureAdminUser(
  identityService: Pick<IdentityService, 'createUser'>,
  email: string,
  password: string | undefined,
): Promise<{ created: boolean; generatedPassword?: string }> {
  const chosen = password ?? randomBytes(18).toString('base64url');
  try {
    await identityService.createUser({ email, password: chosen, role: 'admin' });
  } catch (error) {
    if (error instanceof ConflictError) return { created: false };
    throw error;
  }
  return password ? { created: true } : { created: true, generatedPassword: chosen };
}
