import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import type { CredentialRecord } from '../identity/identity-store.js';
import type { OAuthScope, Role } from '../identity/principal.js';
import type {
  AppChanges,
  AuthorizationCode,
  AuthorizationRequest,
  Grant,
  OAuthApp,
  OAuthClient,
  OAuthStore,
  RefreshToken,
  TokenIssue,
  TokenWriteOutcome,
} from '../oauth/oauth-store.js';
import { toCredential } from './entities/credential.js';
import { oauthClientEntity } from './entities/oauth-client.js';
import { appGrantEntity } from './entities/oauth-grant.js';
import * as tokenGrants from './dynamo-oauth-token-grants.js';
import {
  batchDelete,
  batchGet,
  documentClient,
  isConditionFailure,
  isTransactionConditionFailure,
  queryPartition,
  tableName,
  transactWrite,
} from './dynamo.js';
import { INDEX, keys, TTL_ATTRIBUTE, ttlEpochSeconds, type ItemKey } from './keys.js';
import { queryPage, type Page, type PageRequest } from './pagination.js';

type Item = Record<string, unknown>;
type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

const expiring = (expiresAt: string) => ({ expires_at: expiresAt, [TTL_ATTRIBUTE]: ttlEpochSeconds(expiresAt) });

/** Grants revoked side by side while an application is deleted. */
const GRANT_REVOCATION_CONCURRENCY = 8;

/** The state of a code or refresh token; `#status` in expressions, as STATUS is a reserved word. */
const STATUS = { '#status': 'status' } as const;

function appItem(app: OAuthApp): Item {
  return {
    ...keys.oauthApp(app.id),
    ...keys.oauthAppOfOwner(app.ownerId, app.id),
    entity: 'oauth_app',
    id: app.id,
    client_id: app.clientId,
    owner_id: app.ownerId,
    name: app.name,
    description: app.description,
    redirect_uris: app.redirectUris,
    created_at: app.createdAt,
    updated_at: app.updatedAt,
  };
}

function toApp(item: Item): OAuthApp {
  return {
    id: item.id as string,
    clientId: item.client_id as string,
    ownerId: item.owner_id as string,
    name: item.name as string,
    description: item.description as string,
    redirectUris: item.redirect_uris as string[],
    createdAt: item.created_at as string,
    updatedAt: item.updated_at as string,
  };
}

const toClient = oauthClientEntity.fromItem;

function toAuthorizationRequest(item: Item): AuthorizationRequest {
  return {
    id: item.id as string,
    appId: item.app_id as string,
    clientId: item.client_id as string,
    app: { name: item.app_name as string, description: item.app_description as string },
    redirectUri: item.redirect_uri as string,
    scopes: item.scopes as OAuthScope[],
    state: item.client_state as string,
    ...(item.code_challenge ? { codeChallenge: item.code_challenge as string } : {}),
    expiresAt: item.expires_at as string,
  };
}

function toAuthorizationCode(item: Item): AuthorizationCode {
  return {
    codeHash: item.code_hash as string,
    appId: item.app_id as string,
    clientId: item.client_id as string,
    userId: item.user_id as string,
    role: item.role as Role,
    scopes: item.scopes as OAuthScope[],
    redirectUri: item.redirect_uri as string,
    ...(item.code_challenge ? { codeChallenge: item.code_challenge as string } : {}),
    grantId: item.grant_id as string,
    redeemed: item.status === 'redeemed',
    expiresAt: item.expires_at as string,
  };
}

const put = (item: Item, mustBeNew = true): TransactItem => ({
  Put: { TableName: tableName, Item: item, ...(mustBeNew ? { ConditionExpression: 'attribute_not_exists(pk)' } : {}) },
});

/** The client and one other item in a single BatchGetItem: the first of a grant's two round trips. */
async function clientWith<T>(
  clientId: string,
  otherKey: ItemKey,
  toOther: (item: Item) => T,
): Promise<{ client?: OAuthClient; other?: T }> {
  const clientKey = keys.oauthClient(clientId);
  const found = await batchGet([clientKey, otherKey]);
  const client = found.get(clientKey.pk);
  const other = found.get(otherKey.pk);
  return { ...(client ? { client: toClient(client) } : {}), ...(other ? { other: toOther(other) } : {}) };
}

export class DynamoOAuthStore implements OAuthStore {
  async createApp(app: OAuthApp, secretHash: string): Promise<void> {
    await transactWrite({
      TransactItems: [put(appItem(app)), put(oauthClientEntity.toItem({ clientId: app.clientId, appId: app.id, secretHash }))],
    });
  }

  async getApp(appId: string): Promise<OAuthApp | undefined> {
    const item = await this.getAppItem(appId);
    return item && item.status !== 'deleting' ? toApp(item) : undefined;
  }

  async getAppForDeletion(appId: string): Promise<OAuthApp | undefined> {
    const item = await this.getAppItem(appId);
    return item ? toApp(item) : undefined;
  }

  private async getAppItem(appId: string): Promise<Item | undefined> {
    const { Item } = await documentClient.send(new GetCommand({ TableName: tableName, Key: keys.oauthApp(appId), ConsistentRead: true }));
    return Item;
  }

  async listApps(ownerId: string, page: PageRequest): Promise<Page<OAuthApp>> {
    const result = await queryPage(
      {
        index: INDEX.byOwner,
        partitionAttribute: 'gsi1pk',
        partitionValue: keys.oauthAppsOfOwnerPartition(ownerId),
        sortAttribute: 'gsi1sk',
      },
      page,
    );
    return { ...result, items: result.items.map(toApp) };
  }

  async updateApp(ownerId: string, appId: string, changes: AppChanges, updatedAt: string): Promise<OAuthApp | undefined> {
    const fields: Record<string, unknown> = {
      name: changes.name,
      description: changes.description,
      redirect_uris: changes.redirectUris,
      updated_at: updatedAt,
    };
    const present = Object.entries(fields).filter(([, value]) => value !== undefined);
    try {
      const { Attributes } = await documentClient.send(
        new UpdateCommand({
          TableName: tableName,
          Key: keys.oauthApp(appId),
          UpdateExpression: `SET ${present.map(([name]) => `#${name} = :${name}`).join(', ')}`,
          ConditionExpression: 'attribute_exists(pk) AND owner_id = :owner AND attribute_not_exists(#status)',
          ExpressionAttributeNames: { ...STATUS, ...Object.fromEntries(present.map(([name]) => [`#${name}`, name])) },
          ExpressionAttributeValues: { ':owner': ownerId, ...Object.fromEntries(present.map(([name, value]) => [`:${name}`, value])) },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return toApp(Attributes!);
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }

  async replaceClientSecret(ownerId: string, app: OAuthApp, secretHash: string, updatedAt: string): Promise<boolean> {
    try {
      await transactWrite({
        TransactItems: [
          {
            Update: {
              TableName: tableName,
              Key: keys.oauthApp(app.id),
              UpdateExpression: 'SET updated_at = :updatedAt',
              ConditionExpression: 'attribute_exists(pk) AND owner_id = :owner AND attribute_not_exists(#status)',
              ExpressionAttributeNames: STATUS,
              ExpressionAttributeValues: { ':updatedAt': updatedAt, ':owner': ownerId },
            },
          },
          {
            Update: {
              TableName: tableName,
              Key: keys.oauthClient(app.clientId),
              UpdateExpression: 'SET secret_hash = :secretHash',
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeValues: { ':secretHash': secretHash },
            },
          },
        ],
      });
      return true;
    } catch (error) {
      if (isTransactionConditionFailure(error)) return false;
      throw error;
    }
  }

  async deleteApp(app: OAuthApp): Promise<void> {
    // First the client, so that every in-flight exchange, refresh and consent fails its
    // client check; the application leaves its owner's list at the same moment.
    try {
      await transactWrite({
        TransactItems: [
          {
            Update: {
              TableName: tableName,
              Key: keys.oauthApp(app.id),
              UpdateExpression: 'SET #status = :deleting REMOVE gsi1pk, gsi1sk',
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeNames: STATUS,
              ExpressionAttributeValues: { ':deleting': 'deleting' },
            },
          },
          { Delete: { TableName: tableName, Key: keys.oauthClient(app.clientId) } },
        ],
      });
    } catch (error) {
      // A concurrent deletion got there first; finishing the purge twice is harmless.
      if (!isTransactionConditionFailure(error)) throw error;
    }
    // Anything committed before the client disappeared is visible to this consistent read.
    const members = await queryPartition(keys.oauthAppPartition(app.id));
    const grants = members.filter((member) => (member.sk as string).startsWith(keys.appGrantPrefix));
    for (let start = 0; start < grants.length; start += GRANT_REVOCATION_CONCURRENCY) {
      await Promise.all(
        grants.slice(start, start + GRANT_REVOCATION_CONCURRENCY).map((entry) => tokenGrants.revokeGrant(appGrantEntity.grantIdOf(entry))),
      );
    }
    const codes = members.filter((member) => (member.sk as string).startsWith(keys.appAuthorizationCodePrefix));
    await batchDelete([
      ...codes.flatMap((code) => [keys.authorizationCode(code.code_hash as string), { pk: code.pk as string, sk: code.sk as string }]),
      ...grants.map((entry) => ({ pk: entry.pk as string, sk: entry.sk as string })),
    ]);
    await documentClient.send(new DeleteCommand({ TableName: tableName, Key: keys.oauthApp(app.id) }));
  }

  async getClient(clientId: string): Promise<OAuthClient | undefined> {
    const { Item } = await documentClient.send(
      new GetCommand({ TableName: tableName, Key: keys.oauthClient(clientId), ConsistentRead: true }),
    );
    return Item ? toClient(Item) : undefined;
  }

  async putAuthorizationRequest(request: AuthorizationRequest): Promise<void> {
    await documentClient.send(
      new PutCommand({
        TableName: tableName,
        Item: {
          ...keys.authorizationRequest(request.id),
          entity: 'oauth_authorization_request',
          id: request.id,
          app_id: request.appId,
          client_id: request.clientId,
          app_name: request.app?.name,
          app_description: request.app?.description,
          redirect_uri: request.redirectUri,
          scopes: request.scopes,
          client_state: request.state,
          code_challenge: request.codeChallenge,
          ...expiring(request.expiresAt),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  async getAuthorizationRequest(requestId: string): Promise<AuthorizationRequest | undefined> {
    const { Item } = await documentClient.send(
      new GetCommand({ TableName: tableName, Key: keys.authorizationRequest(requestId), ConsistentRead: true }),
    );
    return Item ? toAuthorizationRequest(Item) : undefined;
  }

  async takeAuthorizationRequest(requestId: string): Promise<AuthorizationRequest | undefined> {
    // Conditional, like the approve transaction's delete: of racing decisions exactly one consumes the
    // request. An unconditional delete with ALL_OLD let two concurrent denials both see the old item on
    // DynamoDB Local.
    try {
      const { Attributes } = await documentClient.send(
        new DeleteCommand({
          TableName: tableName,
          Key: keys.authorizationRequest(requestId),
          ConditionExpression: 'attribute_exists(pk)',
          ReturnValues: 'ALL_OLD',
        }),
      );
      return Attributes ? toAuthorizationRequest(Attributes) : undefined;
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }

  async issueAuthorizationCode(requestId: string, code: AuthorizationCode): Promise<boolean> {
    try {
      await transactWrite({
        TransactItems: [
          { Delete: { TableName: tableName, Key: keys.authorizationRequest(requestId), ConditionExpression: 'attribute_exists(pk)' } },
          { ConditionCheck: { TableName: tableName, Key: keys.oauthClient(code.clientId), ConditionExpression: 'attribute_exists(pk)' } },
          put({
            ...keys.authorizationCode(code.codeHash),
            entity: 'oauth_authorization_code',
            code_hash: code.codeHash,
            app_id: code.appId,
            client_id: code.clientId,
            user_id: code.userId,
            role: code.role,
            scopes: code.scopes,
            redirect_uri: code.redirectUri,
            code_challenge: code.codeChallenge,
            grant_id: code.grantId,
            status: 'issued',
            ...expiring(code.expiresAt),
          }),
          put({
            ...keys.appAuthorizationCode(code.appId, code.codeHash),
            entity: 'oauth_app_code',
            code_hash: code.codeHash,
            ...expiring(code.expiresAt),
          }),
        ],
      });
      return true;
    } catch (error) {
      if (isTransactionConditionFailure(error)) return false;
      throw error;
    }
  }

  async getClientAndCode(clientId: string, codeHash: string): Promise<{ client?: OAuthClient; code?: AuthorizationCode }> {
    const { client, other } = await clientWith(clientId, keys.authorizationCode(codeHash), toAuthorizationCode);
    return { ...(client ? { client } : {}), ...(other ? { code: other } : {}) };
  }

  getTokenGrant(
    clientId: string,
    tokenHash: string,
    grantId: string,
  ): Promise<{ client?: OAuthClient; refreshToken?: RefreshToken; grant?: Grant }> {
    return tokenGrants.getTokenGrant(clientId, tokenHash, grantId);
  }

  async getClientAndAccessToken(clientId: string, tokenHash: string): Promise<{ client?: OAuthClient; accessToken?: CredentialRecord }> {
    const { client, other } = await clientWith(clientId, keys.credential(tokenHash), toCredential);
    return { ...(client ? { client } : {}), ...(other ? { accessToken: other } : {}) };
  }

  redeemAuthorizationCode(code: AuthorizationCode, client: OAuthClient, grant: Grant, tokens: TokenIssue): Promise<TokenWriteOutcome> {
    return tokenGrants.redeemAuthorizationCode(code, client, grant, tokens);
  }

  rotateRefreshToken(grant: Grant, previousHash: string, tokens: TokenIssue): Promise<TokenWriteOutcome> {
    return tokenGrants.rotateRefreshToken(grant, previousHash, tokens);
  }

  revokeGrant(grantId: string): Promise<void> {
    return tokenGrants.revokeGrant(grantId);
  }

  revokeAccessToken(accessToken: CredentialRecord): Promise<void> {
    return tokenGrants.revokeAccessToken(accessToken);
  }
}
