// Over 300 lines because it is ContainerStore's one adapter, and its conditional writes (create, transitions,
// task statuses, releases, quota charges, reconciliation) are transactions on the same items whose conditions
// are read best side by side.
import { GetCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Release } from '../containers/release.js';
import type { QuotaCharge, QuotaUsage } from '../containers/quota.js';
import type { ContainerState, StoredContainer } from '../containers/container.js';
import type {
  ContainerStore,
  CreateOutcome,
  DeleteOutcome,
  ReconcileCheckpoint,
  RestartDue,
  TaskStatusUpdate,
  TransitionChange,
  WorkloadChanges,
  WriteOutcome,
} from '../containers/container-store.js';
import { fieldToJson, WORKLOAD, WORKLOAD_KEYS } from '../containers/workload.js';
import {
  batchGetAll,
  documentClient,
  isConditionFailure,
  isTransactionConditionFailure,
  tableName,
  transactionCancellationCodes,
  transactWrite,
} from './dynamo.js';
import { CONTAINER_ATTRIBUTE, containerEntity, hostnameClaimEntity } from './entities/container.js';
import { quotaUsageEntity } from './entities/quota-usage.js';
import { releaseEntity } from './entities/release.js';
import { volumeClaimItems } from './volume-claims.js';
import type { VolumeClaims } from '../volumes/volume-store.js';
import type { Item } from './entities/item.js';
import { INDEX, keys } from './keys.js';
import { queryPage, type Page, type PageRequest } from './pagination.js';

type Update = Omit<UpdateCommandInput, 'TableName' | 'ReturnValues'>;
type TransactItem = NonNullable<Parameters<typeof transactWrite>[0]['TransactItems']>[number];
/** What a container's write takes with it in its transaction: the release it makes, the volumes it claims or lets go of. */
type Alongside = { release?: Release | undefined; claims?: TransactItem[] };

const toPage = (page: Page<Item>): Page<StoredContainer> => ({ ...page, items: page.items.map(containerEntity.fromItem) });

const changesUsage = (charge: QuotaCharge): boolean => charge.containers !== 0 || charge.runningCpu !== 0 || charge.runningMemoryMb !== 0;

const A = CONTAINER_ATTRIBUTE;

export class DynamoContainerStore implements ContainerStore {
  async create(container: StoredContainer, charge?: QuotaCharge, release?: Release, claims?: VolumeClaims): Promise<CreateOutcome> {
    const usage = charge && changesUsage(charge) ? this.usageUpdate(charge) : undefined;
    const stored = release ? { ...container, release: release.version } : container;
    const claimItems = volumeClaimItems(container.id, claims);
    try {
      await transactWrite({
        TransactItems: [
          {
            Put: {
              TableName: tableName,
              Item: hostnameClaimEntity.toItem(container),
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          { Put: { TableName: tableName, Item: containerEntity.toItem(stored), ConditionExpression: 'attribute_not_exists(pk)' } },
          ...(usage ? [usage] : []),
          ...(release ? [releasePut(release)] : []),
          ...claimItems,
        ],
      });
      return { kind: 'created' };
    } catch (error) {
      const codes = transactionCancellationCodes(error);
      if (usage && codes[2] === 'ConditionalCheckFailed') return { kind: 'quota-exceeded' };
      if (codes.slice(2 + (usage ? 1 : 0) + (release ? 1 : 0)).includes('ConditionalCheckFailed')) return { kind: 'volume-taken' };
      if (isTransactionConditionFailure(error)) return { kind: 'hostname-taken' };
      throw error;
    }
  }

  async get(containerId: string): Promise<StoredContainer | undefined> {
    // Consistent: transitions decide on this read and condition their write on its version.
    const { Item } = await documentClient.send(
      new GetCommand({ TableName: tableName, Key: keys.container(containerId), ConsistentRead: true }),
    );
    return Item ? containerEntity.fromItem(Item) : undefined;
  }

  async getMany(containerIds: readonly string[]): Promise<Map<string, StoredContainer>> {
    // BatchGetItem, strongly consistent like `get`: 100 keys a call, the calls side by side.
    const items = await batchGetAll([...new Set(containerIds)].map((id) => keys.container(id)));
    const found = new Map<string, StoredContainer>();
    for (const item of items.values()) {
      const container = containerEntity.fromItem(item);
      found.set(container.id, container);
    }
    return found;
  }

  async listOwnedBy(userId: string, page: PageRequest): Promise<Page<StoredContainer>> {
    return toPage(
      await queryPage(
        {
          index: INDEX.byOwner,
          partitionAttribute: 'gsi1pk',
          partitionValue: keys.containersOfOwnerPartition(userId),
          sortAttribute: 'gsi1sk',
        },
        page,
      ),
    );
  }

  async listAll(page: PageRequest): Promise<Page<StoredContainer>> {
    return toPage(
      await queryPage(
        { index: INDEX.global, partitionAttribute: 'gsi2pk', partitionValue: keys.allContainersPartition, sortAttribute: 'gsi2sk' },
        page,
      ),
    );
  }

  async beginTransition(
    containerId: string,
    expectedVersion: number,
    change: TransitionChange,
    now: string,
    charge?: QuotaCharge,
  ): Promise<WriteOutcome> {
    const assignments = ['#state = :state', `${A.stateReason} = :reason`, 'version = :next', `${A.updatedAt} = :now`];
    if (change.restartCount !== undefined) assignments.push(`${A.restartCount} = :restartCount`);
    if (change.swapStartedAt !== undefined) assignments.push(`${A.swapStartedAt} = :swapStartedAt`);
    const removals: string[] = change.keepTask
      ? [A.restartAt, A.pendingTaskArn]
      : [A.taskArn, A.taskVersion, A.taskDefinitionArn, A.taskLaunchVersion, A.pendingTaskArn, A.restartAt];
    if (change.swapStartedAt === undefined) removals.push(A.swapStartedAt);
    const { keepTask } = change;
    // The tasks as read: a promotion or a dropped pending task moved them without a new version.
    const keptTasks = keepTask
      ? ` AND ${A.taskArn} = :keptTask AND ${keepTask.pendingTaskArn ? `${A.pendingTaskArn} = :keptPending` : `attribute_not_exists(${A.pendingTaskArn})`}`
      : '';
    return this.versionedWrite(containerId, charge, {
      Key: keys.container(containerId),
      UpdateExpression: `SET ${assignments.join(', ')} REMOVE ${removals.join(', ')}`,
      ConditionExpression: `attribute_exists(pk) AND version = :expected${keptTasks}`,
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: {
        ':state': change.state,
        ':reason': change.stateReason,
        ':next': expectedVersion + 1,
        ':expected': expectedVersion,
        ':now': now,
        ...(change.restartCount !== undefined ? { ':restartCount': change.restartCount } : {}),
        ...(change.swapStartedAt !== undefined ? { ':swapStartedAt': change.swapStartedAt } : {}),
        ...(keepTask ? { ':keptTask': keepTask.taskArn } : {}),
        ...(keepTask?.pendingTaskArn ? { ':keptPending': keepTask.pendingTaskArn } : {}),
      },
    });
  }

  recordSwap(containerId: string, version: number, swapMs: number): Promise<StoredContainer | undefined> {
    return this.updateItem({
      Key: keys.container(containerId),
      UpdateExpression: `SET ${A.lastSwapMs} = :swapMs REMOVE ${A.swapStartedAt}`,
      ConditionExpression: 'attribute_exists(pk) AND version = :version',
      ExpressionAttributeValues: { ':swapMs': swapMs, ':version': version },
    });
  }

  attachTask(containerId: string, version: number, taskArn: string, taskHistory: string[]): Promise<StoredContainer | undefined> {
    return this.updateItem({
      Key: keys.container(containerId),
      UpdateExpression: `SET ${A.taskArn} = :taskArn, ${A.taskHistory} = :taskHistory, ${A.taskLaunchVersion} = :version REMOVE ${A.restartAt}`,
      ConditionExpression: `attribute_exists(pk) AND version = :version AND attribute_not_exists(${A.taskArn})`,
      ExpressionAttributeValues: { ':taskArn': taskArn, ':taskHistory': taskHistory, ':version': version },
    });
  }

  attachPendingTask(containerId: string, version: number, taskArn: string, taskHistory: string[]): Promise<StoredContainer | undefined> {
    return this.updateItem({
      Key: keys.container(containerId),
      UpdateExpression: `SET ${A.pendingTaskArn} = :taskArn, ${A.taskHistory} = :taskHistory`,
      ConditionExpression: `attribute_exists(pk) AND version = :version AND attribute_not_exists(${A.pendingTaskArn})`,
      ExpressionAttributeValues: { ':taskArn': taskArn, ':taskHistory': taskHistory, ':version': version },
    });
  }

  promotePendingTask(containerId: string, version: number, update: TaskStatusUpdate, now: string): Promise<StoredContainer | undefined> {
    return this.updateItem({
      Key: keys.container(containerId),
      UpdateExpression:
        `SET ${A.taskArn} = :taskArn, ${A.taskVersion} = :taskVersion, ${A.taskLaunchVersion} = :version, #state = :state, ` +
        `${A.stateReason} = :reason, ${A.updatedAt} = :now${update.taskDefinitionArn ? `, ${A.taskDefinitionArn} = :taskDefinition` : ''} ` +
        `REMOVE ${A.pendingTaskArn}${update.taskDefinitionArn ? '' : `, ${A.taskDefinitionArn}`}`,
      // Only of a container still running on its old task: one whose old task failed meanwhile (a task status changes
      // the state, not the version) has released its vCPU, and this write charges nothing.
      ConditionExpression: `attribute_exists(pk) AND version = :version AND ${A.pendingTaskArn} = :taskArn AND #state = :running`,
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: {
        ':taskArn': update.taskArn,
        ':taskVersion': update.taskVersion,
        ':version': version,
        ':running': 'running',
        ':state': update.state,
        ':reason': update.stateReason,
        ':now': now,
        ...(update.taskDefinitionArn ? { ':taskDefinition': update.taskDefinitionArn } : {}),
      },
    });
  }

  dropPendingTask(
    containerId: string,
    version: number,
    taskArn: string,
    stateReason: string,
    now: string,
  ): Promise<StoredContainer | undefined> {
    return this.updateItem({
      Key: keys.container(containerId),
      UpdateExpression: `SET ${A.stateReason} = :reason, ${A.updatedAt} = :now REMOVE ${A.pendingTaskArn}`,
      ConditionExpression: `attribute_exists(pk) AND version = :version AND ${A.pendingTaskArn} = :taskArn`,
      ExpressionAttributeValues: { ':reason': stateReason, ':now': now, ':version': version, ':taskArn': taskArn },
    });
  }

  updateWorkload(
    containerId: string,
    expectedVersion: number,
    changes: WorkloadChanges,
    now: string,
    charge?: QuotaCharge,
    release?: Release,
    claims?: VolumeClaims,
  ): Promise<WriteOutcome> {
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ':next': expectedVersion + 1, ':expected': expectedVersion, ':now': now };
    const assignments = ['version = :next', `${A.updatedAt} = :now`];
    let condition = 'attribute_exists(pk) AND version = :expected';
    if (release) {
      // RELEASE is one of DynamoDB's reserved words, so it is named through a placeholder.
      assignments.push('#release = :release');
      names['#release'] = A.release;
      values[':release'] = release.version;
      if (release.cause === 'deploy' && release.deployId) {
        // Of two deploys, the later one wins: an older one that finishes after it went live changes nothing.
        assignments.push(`${A.lastDeployId} = :deployId`);
        values[':deployId'] = release.deployId;
        condition += ` AND (attribute_not_exists(${A.lastDeployId}) OR ${A.lastDeployId} < :deployId)`;
      }
    }
    for (const key of WORKLOAD_KEYS) {
      const value = changes[key];
      if (value === undefined) continue;
      names[`#${key}`] = WORKLOAD[key].name;
      values[`:${key}`] = fieldToJson(key, value);
      assignments.push(`#${key} = :${key}`);
    }
    // Absent rather than false, as a container made without credentials stores it.
    const removals = changes.registryCredentialsSet === false ? [A.registryCredentialsSet] : [];
    if (changes.registryCredentialsSet) {
      values[':registryCredentialsSet'] = true;
      assignments.push(`${A.registryCredentialsSet} = :registryCredentialsSet`);
    }
    return this.versionedWrite(
      containerId,
      charge,
      {
        Key: keys.container(containerId),
        UpdateExpression: `SET ${assignments.join(', ')}${removals.length > 0 ? ` REMOVE ${removals.join(', ')}` : ''}`,
        ConditionExpression: condition,
        ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
        ExpressionAttributeValues: values,
      },
      { release, claims: volumeClaimItems(containerId, claims) },
    );
  }

  async listReleases(containerId: string, page: PageRequest): Promise<Page<Release>> {
    const found = await queryPage(
      {
        partitionAttribute: 'pk',
        partitionValue: keys.containerPartition(containerId),
        sortAttribute: 'sk',
        sortPrefix: keys.releasePrefix,
      },
      page,
    );
    return { ...found, items: found.items.map(releaseEntity.fromItem) };
  }

  async getRelease(containerId: string, version: number): Promise<Release | undefined> {
    const { Item } = await documentClient.send(
      new GetCommand({ TableName: tableName, Key: keys.release(containerId, version), ConsistentRead: true }),
    );
    return Item ? releaseEntity.fromItem(Item) : undefined;
  }

  async pinReleaseDigest(containerId: string, version: number, digest: string): Promise<void> {
    try {
      await documentClient.send(
        new UpdateCommand({
          TableName: tableName,
          Key: keys.release(containerId, version),
          UpdateExpression: 'SET image_digest = :digest',
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(image_digest) OR image_digest = :none)',
          ExpressionAttributeValues: { ':digest': digest, ':none': null },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  async containerIdOfHostname(hostname: string): Promise<string | undefined> {
    const { Item } = await documentClient.send(new GetCommand({ TableName: tableName, Key: keys.hostname(hostname) }));
    const containerId: unknown = Item?.container_id;
    return typeof containerId === 'string' ? containerId : undefined;
  }

  async markFailed(
    containerId: string,
    version: number,
    stateReason: string,
    now: string,
    charge?: QuotaCharge,
  ): Promise<StoredContainer | undefined> {
    return written(
      await this.update(containerId, charge, {
        Key: keys.container(containerId),
        UpdateExpression: `SET #state = :failed, ${A.stateReason} = :reason, ${A.updatedAt} = :now REMOVE ${A.pendingTaskArn}, ${A.restartAt}`,
        ConditionExpression: 'attribute_exists(pk) AND version = :version',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':failed': 'failed', ':reason': stateReason, ':version': version, ':now': now },
      }),
    );
  }

  async applyTaskStatus(
    containerId: string,
    update: TaskStatusUpdate,
    now: string,
    charge?: QuotaCharge,
  ): Promise<StoredContainer | undefined> {
    return written(
      await this.update(containerId, charge, {
        Key: keys.container(containerId),
        UpdateExpression: `SET #state = :state, ${A.stateReason} = :reason, ${A.taskVersion} = :taskVersion, ${A.updatedAt} = :now${update.taskDefinitionArn ? `, ${A.taskDefinitionArn} = :taskDefinition` : ''}`,
        ConditionExpression: `${A.taskArn} = :taskArn AND (attribute_not_exists(${A.taskVersion}) OR ${A.taskVersion} < :taskVersion)`,
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: {
          ':state': update.state,
          ':reason': update.stateReason,
          ':taskVersion': update.taskVersion,
          ':taskArn': update.taskArn,
          ':now': now,
          ...(update.taskDefinitionArn ? { ':taskDefinition': update.taskDefinitionArn } : {}),
        },
      }),
    );
  }

  scheduleRestart(containerId: string, restart: RestartDue, now: string): Promise<StoredContainer | undefined> {
    return this.updateItem({
      Key: keys.container(containerId),
      UpdateExpression:
        `SET #state = :provisioning, ${A.stateReason} = :reason, ${A.restartCount} = :restartCount, ${A.restartAt} = :restartAt, ` +
        `version = version + :one, ${A.updatedAt} = :now ` +
        `REMOVE ${A.taskArn}, ${A.taskVersion}, ${A.taskDefinitionArn}, ${A.taskLaunchVersion}, ${A.pendingTaskArn}`,
      // Only from a state that holds its vCPU, which provisioning holds too, so the restart charges nothing: a container
      // the reconciler settled meanwhile (failed, its vCPU released, same version and task) is not brought back uncharged.
      ConditionExpression: `${A.taskArn} = :taskArn AND (attribute_not_exists(${A.taskVersion}) OR ${A.taskVersion} < :taskVersion) AND #state IN (:provisioning, :running)`,
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: {
        ':provisioning': 'provisioning',
        ':running': 'running',
        ':reason': restart.stateReason,
        ':restartCount': restart.restartCount,
        ':restartAt': restart.restartAt,
        ':one': 1,
        ':now': now,
        ':taskArn': restart.taskArn,
        ':taskVersion': restart.taskVersion,
      },
    });
  }

  async delete(container: StoredContainer, charge?: QuotaCharge, claims?: VolumeClaims): Promise<DeleteOutcome> {
    const usage = charge && changesUsage(charge) ? this.usageUpdate(charge) : undefined;
    try {
      await transactWrite({
        TransactItems: [
          {
            Delete: {
              TableName: tableName,
              Key: keys.container(container.id),
              ConditionExpression: `attribute_exists(pk) AND version = :version${charge?.fromState ? ' AND #state = :fromState' : ''}`,
              ExpressionAttributeValues: {
                ':version': container.version,
                ...(charge?.fromState ? { ':fromState': charge.fromState } : {}),
              },
              ...(charge?.fromState ? { ExpressionAttributeNames: { '#state': 'state' } } : {}),
            },
          },
          {
            Delete: {
              TableName: tableName,
              Key: keys.hostname(container.hostname),
              ConditionExpression: 'container_id = :containerId',
              ExpressionAttributeValues: { ':containerId': container.id },
            },
          },
          ...(usage ? [usage] : []),
          ...volumeClaimItems(container.id, claims),
        ],
      });
      return { kind: 'deleted' };
    } catch (error) {
      if (!isTransactionConditionFailure(error)) throw error;
      return (await this.get(container.id)) ? { kind: 'conflict' } : { kind: 'not-found' };
    }
  }

  async settleTask(
    containerId: string,
    version: number,
    taskArn: string | undefined,
    state: ContainerState,
    stateReason: string,
    now: string,
    charge?: QuotaCharge,
  ): Promise<StoredContainer | undefined> {
    return written(
      await this.update(containerId, charge, {
        Key: keys.container(containerId),
        UpdateExpression: `SET #state = :state, ${A.stateReason} = :reason, ${A.updatedAt} = :now`,
        ConditionExpression: `attribute_exists(pk) AND version = :version AND ${taskArn ? `${A.taskArn} = :taskArn` : `attribute_not_exists(${A.taskArn})`}`,
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: {
          ':state': state,
          ':reason': stateReason,
          ':version': version,
          ':now': now,
          ...(taskArn ? { ':taskArn': taskArn } : {}),
        },
      }),
    );
  }

  async correctUsage(userId: string, expected: QuotaUsage, actual: QuotaUsage): Promise<boolean> {
    const { containers, runningCpu, runningMemoryMb } = quotaUsageEntity.attributes;
    // An absent attribute reads 0 (quotaUsageEntity), so 0 is expected as either.
    const holds = (attribute: string, value: string, zero: boolean) =>
      zero ? `(attribute_not_exists(${attribute}) OR ${attribute} = ${value})` : `${attribute} = ${value}`;
    try {
      await documentClient.send(
        new UpdateCommand({
          TableName: tableName,
          Key: quotaUsageEntity.key(userId),
          UpdateExpression: `SET ${containers} = :containers, ${runningCpu} = :cpu, ${runningMemoryMb} = :memory, ${quotaUsageEntity.ownerAttribute} = :userId`,
          ConditionExpression: [
            holds(containers, ':expectedContainers', expected.containers === 0),
            holds(runningCpu, ':expectedCpu', expected.runningCpu === 0),
            holds(runningMemoryMb, ':expectedMemory', expected.runningMemoryMb === 0),
          ].join(' AND '),
          ExpressionAttributeValues: {
            ':containers': actual.containers,
            ':cpu': actual.runningCpu,
            ':memory': actual.runningMemoryMb,
            ':userId': userId,
            ':expectedContainers': expected.containers,
            ':expectedCpu': expected.runningCpu,
            ':expectedMemory': expected.runningMemoryMb,
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async reconcileCheckpoint(): Promise<ReconcileCheckpoint> {
    const { Item } = await documentClient.send(new GetCommand({ TableName: tableName, Key: keys.reconcileCheckpoint }));
    return {
      ...(typeof Item?.containers_cursor === 'string' ? { containersCursor: Item.containers_cursor } : {}),
      ...(typeof Item?.tasks_cursor === 'string' ? { tasksCursor: Item.tasks_cursor } : {}),
      ...(typeof Item?.restarts_cursor === 'string' ? { restartsCursor: Item.restarts_cursor } : {}),
    };
  }

  async saveReconcileCheckpoint(checkpoint: ReconcileCheckpoint): Promise<void> {
    // UpdateItem, which creates the item too: the reconciler is allowed no PutItem.
    await documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.reconcileCheckpoint,
        UpdateExpression: 'SET containers_cursor = :containers, tasks_cursor = :tasks, restarts_cursor = :restarts',
        ExpressionAttributeValues: {
          ':containers': checkpoint.containersCursor ?? null,
          ':tasks': checkpoint.tasksCursor ?? null,
          ':restarts': checkpoint.restartsCursor ?? null,
        },
      }),
    );
  }

  /**
   * The user's quota use (consistent: a refusal names it). Only the usage attributes are read:
   * the container functions may read no other attribute of the user's partition, where the
   * profile lives too (docs/security.md, "Security").
   */
  async usageOf(userId: string): Promise<QuotaUsage> {
    const { containers, runningCpu, runningMemoryMb } = quotaUsageEntity.attributes;
    const { Item } = await documentClient.send(
      new GetCommand({
        TableName: tableName,
        Key: quotaUsageEntity.key(userId),
        ConsistentRead: true,
        ProjectionExpression: `${containers}, ${runningCpu}, ${runningMemoryMb}`,
      }),
    );
    return quotaUsageEntity.fromItem(Item);
  }

  /**
   * The usage item's part of a transaction: ADD the deltas, on condition that each use that
   * grows is at most the charge's ceiling. The transaction commits all or nothing, so a refused
   * charge writes no container either
   * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html).
   */
  private usageUpdate(charge: QuotaCharge): TransactItem {
    const { containers, runningCpu, runningMemoryMb } = quotaUsageEntity.attributes;
    const owner = quotaUsageEntity.ownerAttribute;
    const conditions: string[] = [];
    const values: Record<string, unknown> = {
      ':containers': charge.containers,
      ':cpu': charge.runningCpu,
      ':memory': charge.runningMemoryMb,
      ':userId': charge.userId,
    };
    if (charge.ceiling.containers !== undefined) {
      conditions.push(`(attribute_not_exists(${containers}) OR ${containers} <= :roomContainers)`);
      values[':roomContainers'] = charge.ceiling.containers;
    }
    if (charge.ceiling.runningCpu !== undefined) {
      conditions.push(`(attribute_not_exists(${runningCpu}) OR ${runningCpu} <= :roomCpu)`);
      values[':roomCpu'] = charge.ceiling.runningCpu;
    }
    if (charge.ceiling.runningMemoryMb !== undefined) {
      conditions.push(`(attribute_not_exists(${runningMemoryMb}) OR ${runningMemoryMb} <= :roomMemory)`);
      values[':roomMemory'] = charge.ceiling.runningMemoryMb;
    }
    return {
      Update: {
        TableName: tableName,
        Key: quotaUsageEntity.key(charge.userId),
        UpdateExpression: `ADD ${containers} :containers, ${runningCpu} :cpu, ${runningMemoryMb} :memory SET ${owner} = :userId`,
        ...(conditions.length > 0 ? { ConditionExpression: conditions.join(' AND ') } : {}),
        ExpressionAttributeValues: values,
      },
    };
  }

  /** A write conditional on the version read: when its condition fails, tells a moved-on container from a deleted one. */
  private async versionedWrite(
    containerId: string,
    charge: QuotaCharge | undefined,
    input: Update,
    also: Alongside = {},
  ): Promise<WriteOutcome> {
    const outcome = await this.update(containerId, charge, input, also);
    if (outcome.kind !== 'conflict') return outcome;
    return (await this.get(containerId)) ? outcome : { kind: 'not-found' };
  }

  /**
   * A conditional update answering the new item. With a charge, it is also conditional on the
   * state the charge was computed from, and goes in one transaction with the usage item.
   */
  private async update(containerId: string, charge: QuotaCharge | undefined, input: Update, also: Alongside = {}): Promise<WriteOutcome> {
    const claims = also.claims ?? [];
    if (!also.release && claims.length === 0 && (!charge || (!changesUsage(charge) && !charge.fromState))) return this.updated(input);
    if (!also.release && claims.length === 0 && !changesUsage(charge!)) return this.updated(conditionedOn(input, charge!));
    return this.transacted(containerId, charge, input, also);
  }

  /**
   * The container's update, its charge, its release and its volume claims in one transaction, each
   * condition told apart: the container's or its release's is a conflict, the usage's the quota, a
   * claim's a volume another holds. A transaction answers no item, so the container is read back
   * (consistent), as written. With a charge, the write is also conditional on the state the charge
   * was computed from.
   */
  private async transacted(containerId: string, charge: QuotaCharge | undefined, input: Update, also: Alongside): Promise<WriteOutcome> {
    const conditioned = charge ? conditionedOn(input, charge) : input;
    const usage = charge && changesUsage(charge) ? [this.usageUpdate(charge)] : [];
    const release = also.release ? [releasePut(also.release)] : [];
    try {
      await transactWrite({
        TransactItems: [{ Update: { TableName: tableName, ...conditioned } as never }, ...usage, ...release, ...(also.claims ?? [])],
      });
    } catch (error) {
      const codes = transactionCancellationCodes(error);
      if (codes[0] === 'ConditionalCheckFailed') return { kind: 'conflict' };
      if (usage.length > 0 && codes[1] === 'ConditionalCheckFailed') return { kind: 'quota-exceeded' };
      if (release.length > 0 && codes[1 + usage.length] === 'ConditionalCheckFailed') return { kind: 'conflict' };
      if (codes.slice(1 + usage.length + release.length).includes('ConditionalCheckFailed')) return { kind: 'volume-taken' };
      throw error;
    }
    const container = await this.get(containerId);
    return container ? { kind: 'written', container } : { kind: 'not-found' };
  }

  private async updated(input: Update): Promise<WriteOutcome> {
    const container = await this.updateItem(input);
    return container ? { kind: 'written', container } : { kind: 'conflict' };
  }

  private async updateItem(input: Update): Promise<StoredContainer | undefined> {
    try {
      const { Attributes } = await documentClient.send(new UpdateCommand({ TableName: tableName, ReturnValues: 'ALL_NEW', ...input }));
      return containerEntity.fromItem(Attributes!);
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }
}

/** A release's item, written once: a second write of the same version is a conflict. */
const releasePut = (release: Release): TransactItem => ({
  Put: { TableName: tableName, Item: releaseEntity.toItem(release), ConditionExpression: 'attribute_not_exists(pk)' },
});

/** The update, also conditional on the state a charge was computed from (when it names one). */
const conditionedOn = (input: Update, charge: QuotaCharge): Update =>
  charge.fromState
    ? {
        ...input,
        ConditionExpression: `(${input.ConditionExpression}) AND #state = :fromState`,
        ExpressionAttributeNames: { ...input.ExpressionAttributeNames, '#state': 'state' },
        ExpressionAttributeValues: { ...input.ExpressionAttributeValues, ':fromState': charge.fromState },
      }
    : input;

const written = (outcome: WriteOutcome): StoredContainer | undefined => (outcome.kind === 'written' ? outcome.container : undefined);
