import type { AttributeFamily, IndexFamily, ItemFamily } from '../table-access.js';
import { quotaUsageEntity } from './entities/quota-usage.js';
import { VOLUME_ATTRIBUTE } from './entities/volume.js';
import { INDEX, keys } from './keys.js';
import { tableDefinition } from './table-definition.js';

/**
 * Which partition keys each family of lib/table-access.ts is, as `dynamodb:LeadingKeys`
 * patterns (StringLike: `*` matches any run of characters). Every pattern is the key builder
 * of lib/store/keys.ts applied to `*`, so a key that changes there changes its grant too.
 */
export interface PartitionFamily {
  /** The partition key pattern, e.g. `USER#*`. */
  partition: string;
  /** Set for an index partition: the grant is Query on that index. */
  index?: (typeof INDEX)[keyof typeof INDEX];
  /** Set when the grant is limited to these attributes (`dynamodb:Attributes`); keys included. */
  attributes?: readonly string[];
}

const ANY = '*';
const itemKeyAttributes = [tableDefinition.partitionKey, tableDefinition.sortKey];
/** The attribute authentication stamps on a personal access token and its credential (lib/store/dynamo-identity-store.ts). */
const LAST_USED_AT = 'last_used_at';

export const keyFamilies = {
  user: { partition: keys.user(ANY).pk },
  email: { partition: keys.email(ANY).pk },
  loginFailures: { partition: keys.loginFailures(ANY).pk },
  credential: { partition: keys.credential(ANY).pk },
  container: { partition: keys.container(ANY).pk },
  hostname: { partition: keys.hostname(ANY).pk },
  oauthApp: { partition: keys.oauthAppPartition(ANY) },
  oauthClient: { partition: keys.oauthClient(ANY).pk },
  authorizationRequest: { partition: keys.authorizationRequest(ANY).pk },
  registrationsFromAddress: { partition: keys.registrationsFromAddress(ANY, 0).pk },
  authorizationCode: { partition: keys.authorizationCode(ANY).pk },
  grant: { partition: keys.grant(ANY).pk },
  deviceAuthorization: { partition: keys.deviceAuthorization(ANY).pk },
  userCode: { partition: keys.userCode(ANY).pk },
  userCodeFailures: { partition: keys.userCodeFailures(ANY).pk },
  reconcileCheckpoint: { partition: keys.reconcileCheckpoint.pk },
  appRoute: { partition: keys.appRoute(ANY).pk },
  wakeHolds: { partition: keys.wakeHolds(ANY).pk },
  buildSlots: { partition: keys.buildSlots(ANY).pk },
  volume: { partition: keys.volume(ANY).pk },
  snapshot: { partition: keys.snapshot(ANY).pk },

  quotaUsage: {
    partition: keys.quotaUsage(ANY).pk,
    attributes: [...itemKeyAttributes, ...Object.values(quotaUsageEntity.attributes), quotaUsageEntity.ownerAttribute],
  },
  credentialLastUsed: { partition: keys.credential(ANY).pk, attributes: [...itemKeyAttributes, LAST_USED_AT] },
  /** A volume's measured use, and nothing else of it (the task state function's measures: lib/aws/volume-measuring.ts). */
  volumeUsage: { partition: keys.volume(ANY).pk, attributes: [...itemKeyAttributes, VOLUME_ATTRIBUTE.usedBytes, VOLUME_ATTRIBUTE.usedAt] },
  /** A snapshot's state, size and reason, and nothing else of it (the task state function's snapshot jobs: lib/aws/volume-snapshots.ts). */
  snapshotState: { partition: keys.snapshot(ANY).pk, attributes: [...itemKeyAttributes, 'state', 'size_bytes', 'state_reason'] },
  tokenLastUsed: { partition: keys.personalAccessToken(ANY, ANY).pk, attributes: [...itemKeyAttributes, LAST_USED_AT] },

  containersOfOwner: { partition: keys.containersOfOwnerPartition(ANY), index: INDEX.byOwner },
  appsOfOwner: { partition: keys.oauthAppsOfOwnerPartition(ANY), index: INDEX.byOwner },
  grantsOfUser: { partition: keys.grantsOfUserPartition(ANY), index: INDEX.byOwner },
  allUsers: { partition: keys.allUsersPartition, index: INDEX.global },
  allContainers: { partition: keys.allContainersPartition, index: INDEX.global },
  volumesOfOwner: { partition: keys.volumesOfOwnerPartition(ANY), index: INDEX.byOwner },
  snapshotsOfVolume: { partition: keys.snapshotsOfVolumePartition(ANY), index: INDEX.byOwner },
  allVolumes: { partition: keys.allVolumesPartition, index: INDEX.global },
} as const satisfies Record<ItemFamily | AttributeFamily | IndexFamily, PartitionFamily>;
