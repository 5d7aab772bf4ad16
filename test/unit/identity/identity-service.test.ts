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

describe('IdentityService.createPersonalAccessToken (issue 7 item 8)', () => {
  const now = new Date('2026-01-01T00:00:00.000Z');
  const creator = {
    userId: 'u-1',
    role: 'user' as const,
    scopes: ['containers:read' as const, 'containers:write' as const],
    credentialHash: 'h',
  };
  function serviceRecording() {
    const stored: Array<{ expiresAt: string }> = [];
    const store = {
      createPersonalAccessToken: async (metadata: { expiresAt: string }) => void stored.push(metadata),
    } as unknown as IdentityStore;
    return { service: new IdentityService(store, () => now), stored };
  }

  it('caps a PAT created with a PAT at its creator’s expiry', async () => {
    const { service, stored } = serviceRecording();
    const creatorExpiry = '2026-01-11T00:00:00.000Z';
    const issued = await service.createPersonalAccessToken(
      { ...creator, kind: 'pat', expiresAt: creatorExpiry },
      { name: 'child', expiresInDays: 365 },
    );
    expect(issued.expiresAt).toBe(creatorExpiry);
    expect(stored[0]?.expiresAt).toBe(creatorExpiry);
  });

  it('keeps a shorter requested lifetime for a PAT created with a PAT', async () => {
    const { service } = serviceRecording();
    const issued = await service.createPersonalAccessToken(
      { ...creator, kind: 'pat', expiresAt: '2026-12-01T00:00:00.000Z' },
      { name: 'c', expiresInDays: 2 },
    );
    expect(issued.expiresAt).toBe('2026-01-03T00:00:00.000Z');
  });

  it('gives a PAT created with a session the requested 1..365 days, beyond the session’s own expiry', async () => {
    const { service } = serviceRecording();
    const issued = await service.createPersonalAccessToken(
      { ...creator, kind: 'session', expiresAt: '2026-01-02T00:00:00.000Z', csrfToken: 'c' },
      { name: 'c', expiresInDays: 365 },
    );
    expect(issued.expiresAt).toBe('2027-01-01T00:00:00.000Z');
  });
});
