import { INDEX, TTL_ATTRIBUTE } from './keys.js';

/**
 * The single table's shape, shared by the CDK stack and by the code that creates the
 * table in DynamoDB Local, so the two cannot drift apart.
 */
export const tableDefinition = {
  partitionKey: 'pk',
  sortKey: 'sk',
  ttlAttribute: TTL_ATTRIBUTE,
  globalIndexes: [
    { name: INDEX.byOwner, partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
    { name: INDEX.global, partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
  ],
} as const;
