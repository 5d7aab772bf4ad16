import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../../../lib/errors.js';
import type { IdentityStore } from '../../../lib/identity/identity-store.js';
import { IdentityService } from '../../../lib/identity/identity-service.js';

describe('IdentityService.createUser', () => {
  it('refuses a password under 12 characters whoever calls it, before storing anything', async () => {
    const untouchable = new Proxy({} as IdentityStore, {
      get: () => {
        throw new Error('the store must not be used');
      },
    });
    const service = new IdentityService(untouchable);
    await expect(service.createUser({ email: 'a@example.com', password: 'elevenchars' })).rejects.toBeInstanceOf(BadRequestError);
  });
});
