import { describe, expect, it, vi } from 'vitest';
import { fetchedOnce, successorTokens } from '../../../lib/oauth/refresh-grace.js';

const GRANT_ID = '0190f5c2-7a3e-7b1c-8d2e-123456789abc';
const key = Buffer.alloc(32, 7);
const presented = `svrt_${'a'.repeat(43)}.${GRANT_ID}`;

describe('successorTokens', () => {
  it('derives the same pair from the same token and key, in the format of random tokens', () => {
    const pair = successorTokens(key, presented, GRANT_ID);

    expect(successorTokens(key, presented, GRANT_ID)).toEqual(pair);
    expect(pair.refreshToken).toMatch(new RegExp(`^svrt_[\\w-]{43}\\.${GRANT_ID}$`));
    expect(pair.accessToken).toMatch(new RegExp(`^svat_[\\w-]{43}\\.${GRANT_ID}$`));
    expect(pair.accessToken.slice(5, 48)).not.toBe(pair.refreshToken.slice(5, 48));
  });

  it('derives another pair from another token or under another key', () => {
    const pair = successorTokens(key, presented, GRANT_ID);

    expect(successorTokens(Buffer.alloc(32, 8), presented, GRANT_ID).refreshToken).not.toBe(pair.refreshToken);
    expect(successorTokens(key, `svrt_${'b'.repeat(43)}.${GRANT_ID}`, GRANT_ID).refreshToken).not.toBe(pair.refreshToken);
  });
});

describe('fetchedOnce', () => {
  it('asks its source once however many callers wait, and asks again after a failure', async () => {
    const source = vi.fn().mockRejectedValueOnce(new Error('throttled')).mockResolvedValue(key);
    const grace = fetchedOnce(source);

    await expect(grace()).rejects.toThrow('throttled');
    const keys = await Promise.all([grace(), grace(), grace()]);

    expect(keys).toEqual([key, key, key]);
    expect(source).toHaveBeenCalledTimes(2);
  });

  it('refuses a key shorter than 32 bytes', async () => {
    await expect(fetchedOnce(async () => Buffer.alloc(16))()).rejects.toThrow(/at least 32 bytes/);
  });
});
