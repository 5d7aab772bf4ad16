import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ClientRegistrationStore } from '../oauth/client-registration.js';
import type { OAuthApp } from '../oauth/oauth-store.js';
import { createApp } from './dynamo-oauth-applications.js';
import { documentClient, tableName } from './dynamo.js';
import { keys, TTL_ATTRIBUTE, ttlEpochSeconds } from './keys.js';

/** Dynamic client registration (RFC 7591): the application nobody owns, and the count per address. */
export class DynamoClientRegistrationStore implements ClientRegistrationStore {
  createApp(app: OAuthApp, secretHash: string | undefined): Promise<void> {
    return createApp(app, secretHash);
  }

  /** One UpdateItem: the window's counter, created on its first registration and gone by TTL after it. */
  async countRegistration(addressHash: string, windowStart: number, windowEndsAt: string): Promise<number> {
    const { Attributes } = await documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.registrationsFromAddress(addressHash, windowStart),
        UpdateExpression: `ADD registrations :one SET ${TTL_ATTRIBUTE} = :expires`,
        ExpressionAttributeValues: { ':one': 1, ':expires': ttlEpochSeconds(windowEndsAt) },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return Number(Attributes?.registrations ?? 1);
  }
}
