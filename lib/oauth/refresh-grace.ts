import { createHmac } from 'node:crypto';
import { CREDENTIAL_PREFIX } from '../identity/secrets.js';

/**
 * The refresh retry grace (docs/oauth.md, "Refresh retries"): a refresh token presented again
 * within `seconds` of its rotation, while its successor is unused, gets the same answer. The
 * answer is derived from the presented token with a key only the service holds, so nothing
 * reversible is stored and every retry, on any instance, derives the same pair.
 */
export interface RefreshGrace {
  /** 0 turns the grace off: a rotated token presented again is a replay, and tokens are random. */
  seconds: number;
  /** The derivation key, fetched once per container; at least 32 bytes. */
  key(): Promise<Uint8Array>;
}

/** The longest grace an operator or an application's owner may choose (docs/oauth.md, "Refresh retries"). */
export const MAX_REFRESH_REUSE_GRACE_SECONDS = 60;

export const NO_REFRESH_GRACE: RefreshGrace = {
  seconds: 0,
  key: () => Promise.reject(new Error('The refresh retry grace is off')),
};

/** Keys shorter than HMAC-SHA-256's output would weaken the derivation (RFC 2104 section 3). */
export const MIN_REFRESH_GRACE_KEY_BYTES = 32;

const derive = (key: Uint8Array, purpose: string, presented: string): string =>
  createHmac('sha256', key).update(`${purpose}\0${presented}`, 'utf8').digest('base64url');

/**
 * The refresh and access tokens a rotation of `presentedRefreshToken` hands out: HMAC-SHA-256
 * of the presented token under the key, one label per token, in the same format as random ones
 * (256 bits in base64url, then the grant id). Without the key they cannot be told from random
 * tokens nor computed from the presented one; the grant stores only their SHA-256 hashes.
 */
export function successorTokens(
  key: Uint8Array,
  presentedRefreshToken: string,
  grantId: string,
): { refreshToken: string; accessToken: string } {
  return {
    refreshToken: `${CREDENTIAL_PREFIX.refreshToken}${derive(key, 'refresh', presentedRefreshToken)}.${grantId}`,
    accessToken: `${CREDENTIAL_PREFIX.accessToken}${derive(key, 'access', presentedRefreshToken)}.${grantId}`,
  };
}

/** A key source asked once per container; a failed fetch is tried again on the next call. */
export function fetchedOnce(fetchKey: () => Promise<Uint8Array>): () => Promise<Uint8Array> {
  let pending: Promise<Uint8Array> | undefined;
  return () => {
    pending ??= fetchKey().then((key) => {
      if (key.byteLength < MIN_REFRESH_GRACE_KEY_BYTES)
        throw new Error(`The refresh grace key must be at least ${MIN_REFRESH_GRACE_KEY_BYTES} bytes`);
      return key;
    });
    pending.catch(() => {
      pending = undefined;
    });
    return pending;
  };
}
