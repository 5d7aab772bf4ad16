/** How long each OAuth item lives (docs/oauth.md, "Lifetimes"). */
export const AUTHORIZATION_REQUEST_LIFETIME_SECONDS = 10 * 60;
export const AUTHORIZATION_CODE_LIFETIME_SECONDS = 10 * 60;
export const ACCESS_TOKEN_LIFETIME_SECONDS = 900;
export const REFRESH_TOKEN_LIFETIME_SECONDS = 30 * 86_400;
export const GRANT_LIFETIME_SECONDS = 90 * 86_400;

export const isoAfter = (now: Date, seconds: number): string => new Date(now.getTime() + seconds * 1000).toISOString();
export const earlier = (a: string, b: string): string => (Date.parse(a) <= Date.parse(b) ? a : b);

/** DynamoDB deletes expired items lazily, so expiry is checked on every read, never left to TTL. */
export const hasExpired = (expiresAt: string, now: Date): boolean => Date.parse(expiresAt) <= now.getTime();
