import { describe, expect, it } from 'vitest';
import { taskStateChangedFunction } from '../../infra/event-functions.js';
import { tableStatements } from '../../infra/table-policy.js';
import { type RouteId, routeById } from '../../lib/http/routes.js';
import { keyFamilies } from '../../lib/store/key-families.js';
import { INDEX, keys } from '../../lib/store/keys.js';
import type { TableAccess } from '../../lib/table-access.js';
import { isAllowed } from '../support/iam-evaluator.js';
import { accessRequestsOf, TEST_TABLE_ARN, testIndexArn } from '../support/table-access.js';

/*
 * The statements a declaration grants, evaluated against DynamoDB requests as IAM sees them:
 * the same check test/support/table-access-recorder.ts makes of every request the integration
 * and e2e tests drive through each function.
 */
const arns = { table: TEST_TABLE_ARN, index: testIndexArn };
const grantOf = (id: RouteId) => tableStatements(routeById(id).permissions.table, arns);
const permits = (statements: ReturnType<typeof tableStatements>, command: string, input: Record<string, unknown>) =>
  accessRequestsOf(command, input).every((request) => isAllowed(statements, request));

const userId = '0190f1c2-0000-7000-8000-000000000002';
const containerId = '0190f1c2-0000-7000-8000-000000000003';

describe('table grants from key families', () => {
  it('derives every partition pattern from the key builders, so each matches the keys they make', () => {
    // Prepare
    const samples: Record<keyof typeof keyFamilies, string> = {
      user: keys.user(userId).pk,
      email: keys.email('someone@example.com').pk,
      loginFailures: keys.loginFailures('someone@example.com').pk,
      credential: keys.credential('c'.repeat(64)).pk,
      container: keys.container(containerId).pk,
      hostname: keys.hostname('my-app').pk,
      appRoute: keys.appRoute('0123456789abcdef0123456789abcdef').pk,
      wakeHolds: keys.wakeHolds(containerId).pk,
      buildSlots: keys.buildSlots(userId).pk,
      oauthApp: keys.appGrant(userId, containerId).pk,
      oauthClient: keys.oauthClient('client').pk,
      authorizationRequest: keys.authorizationRequest(userId).pk,
      registrationsFromAddress: keys.registrationsFromAddress('a'.repeat(64), 29_612_345).pk,
      authorizationCode: keys.authorizationCode('d'.repeat(64)).pk,
      grant: keys.grant(userId).pk,
      deviceAuthorization: keys.deviceAuthorization('e'.repeat(64)).pk,
      userCode: keys.userCode('f'.repeat(64)).pk,
      userCodeFailures: keys.userCodeFailures('c'.repeat(64)).pk,
      reconcileCheckpoint: keys.reconcileCheckpoint.pk,
      quotaUsage: keys.quotaUsage(userId).pk,
      credentialLastUsed: keys.credential('c'.repeat(64)).pk,
      tokenLastUsed: keys.personalAccessToken(userId, containerId).pk,
      containersOfOwner: keys.containersOfOwnerPartition(userId),
      appsOfOwner: keys.oauthAppsOfOwnerPartition(userId),
      grantsOfUser: keys.grantsOfUserPartition(userId),
      allUsers: keys.allUsersPartition,
      allContainers: keys.allContainersPartition,
      volume: keys.volume(containerId).pk,
      volumeUsage: keys.volume(containerId).pk,
      snapshotState: keys.snapshot(containerId).pk,
      snapshot: keys.snapshot(containerId).pk,
      volumesOfOwner: keys.volumesOfOwnerPartition(userId),
      snapshotsOfVolume: keys.snapshotsOfVolumePartition(containerId),
      allVolumes: keys.allVolumesPartition,
    };
    // Assess
    for (const [name, family] of Object.entries(keyFamilies)) {
      const pattern = new RegExp(`^${family.partition.replace(/\*/g, '[^#]*')}$`);
      expect(samples[name as keyof typeof keyFamilies], name).toMatch(pattern);
    }
    expect(keyFamilies.user.partition).toBe('USER#*');
    expect(keyFamilies.containersOfOwner).toEqual({ partition: 'OWNER#*#CONTAINER', index: INDEX.byOwner });
  });

  it('refuses a function what its declaration leaves out, as IAM would: a container route reading an email claim', () => {
    // Prepare
    const readEmailClaim = { TableName: 't', Key: keys.email('someone@example.com'), ConsistentRead: true };
    // Assess
    expect(permits(grantOf('getContainer'), 'GetItemCommand', readEmailClaim)).toBe(false);
    expect(permits(grantOf('createSession'), 'GetItemCommand', readEmailClaim)).toBe(true);
  });

  it('authorizes a transaction item by item: a container write and its quota charge', () => {
    // Prepare: what lib/store/dynamo-container-store.ts sends for a charged transition.
    const transition = {
      TransactItems: [
        {
          Update: {
            Key: keys.container(containerId),
            UpdateExpression: 'SET #state = :state, version = :next',
            ConditionExpression: 'attribute_exists(pk) AND version = :expected',
            ExpressionAttributeNames: { '#state': 'state' },
          },
        },
        {
          Update: {
            Key: keys.quotaUsage(userId),
            UpdateExpression: 'ADD containers :containers, running_cpu :cpu, running_memory_mb :memory SET user_id = :userId',
            ConditionExpression:
              '(attribute_not_exists(running_cpu) OR running_cpu <= :roomCpu) AND (attribute_not_exists(running_memory_mb) OR running_memory_mb <= :roomMemory)',
          },
        },
      ],
    };
    // Assess
    expect(permits(grantOf('startContainer'), 'TransactWriteItemsCommand', transition)).toBe(true);
    expect(permits(tableStatements(taskStateChangedFunction.permissions.table, arns), 'TransactWriteItemsCommand', transition)).toBe(true);
    expect(permits(grantOf('getContainer'), 'TransactWriteItemsCommand', transition)).toBe(false);
  });

  it('lets container functions read the quota usage only by projection, never the whole user item', () => {
    // Prepare
    const withProjection = { Key: keys.quotaUsage(userId), ProjectionExpression: 'containers, running_cpu, running_memory_mb' };
    const whole = { Key: keys.quotaUsage(userId) };
    // Assess
    expect(permits(grantOf('createContainer'), 'GetItemCommand', withProjection)).toBe(true);
    expect(permits(grantOf('createContainer'), 'GetItemCommand', whole)).toBe(false);
    expect(
      permits(grantOf('createContainer'), 'GetItemCommand', {
        Key: keys.user(userId),
        ProjectionExpression: 'email, #r',
        ExpressionAttributeNames: { '#r': 'role' },
      }),
    ).toBe(false);
    expect(permits(grantOf('getMe'), 'GetItemCommand', whole)).toBe(true);
  });

  it('needs every key of a BatchGetItem in one statement: an access token and its grant', () => {
    // Prepare
    const credentialAndGrant = { RequestItems: { t: { Keys: [keys.credential('c'.repeat(64)), keys.grant(userId)] } } };
    const declared: TableAccess = { read: ['credential'] };
    // Assess
    expect(permits(grantOf('getContainer'), 'BatchGetItemCommand', credentialAndGrant)).toBe(true);
    expect(permits(tableStatements(declared, arns), 'BatchGetItemCommand', credentialAndGrant)).toBe(false);
  });

  it('lets a Query of an index read only the partitions declared for that index', () => {
    // Prepare
    const ownContainers = {
      IndexName: INDEX.byOwner,
      KeyConditionExpression: '#p = :p',
      ExpressionAttributeNames: { '#p': 'gsi1pk' },
      ExpressionAttributeValues: { ':p': keys.containersOfOwnerPartition(userId) },
    };
    const ownApps = { ...ownContainers, ExpressionAttributeValues: { ':p': keys.oauthAppsOfOwnerPartition(userId) } };
    // Assess
    expect(permits(grantOf('listContainers'), 'QueryCommand', ownContainers)).toBe(true);
    expect(permits(grantOf('listContainers'), 'QueryCommand', ownApps)).toBe(false);
    expect(permits(grantOf('listApps'), 'QueryCommand', ownApps)).toBe(true);
  });
});
