import type { OAuthClient } from '../oauth/oauth-store.js';

/**
 * The condition a token transaction puts on the client it authenticated: it still exists and
 * its secret is the one checked (a public client still has none), so a rotation or a deletion
 * between the read and the write makes the transaction fail.
 */
export function clientUnchangedCondition(client: OAuthClient): {
  ConditionExpression: string;
  ExpressionAttributeValues?: Record<string, unknown>;
} {
  if (client.secretHash === undefined) return { ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(secret_hash)' };
  return {
    ConditionExpression: 'attribute_exists(pk) AND secret_hash = :secretHash',
    ExpressionAttributeValues: { ':secretHash': client.secretHash },
  };
}
