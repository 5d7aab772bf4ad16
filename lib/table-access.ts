/**
 * The vocabulary of what a function may touch in the single table, by key family: the route
 * table (lib/http/routes.ts) declares it per route, lib/store/keys.ts says which partition
 * keys each family is (so the patterns come from the key builders), and the CDK stack turns
 * both into IAM statements conditioned on `dynamodb:LeadingKeys` (docs/security.md, "Security").
 */

/** Families of items, named by their partition key (`USER#<id>`, `CREDENTIAL#<hash>`, ...). */
export type ItemFamily =
  /** `USER#<id>`: the profile, the user's personal access tokens, and the quota usage item. */
  | 'user'
  /** `EMAIL#<email>`: the email claim, which holds the password hash. */
  | 'email'
  | 'loginFailures'
  /** `CREDENTIAL#<hash>`: sessions and PATs (OAuth access tokens live in their grant). */
  | 'credential'
  | 'container'
  | 'hostname'
  /** `OAUTH_APP#<id>`: the application, and its index of codes and grants. */
  | 'oauthApp'
  /** `OAUTH_CLIENT#<client_id>`: the client's secret hash. */
  | 'oauthClient'
  | 'authorizationRequest'
  /** `OAUTH_REGISTRATIONS#<address hash>`: dynamic registrations per client address and window. */
  | 'registrationsFromAddress'
  | 'authorizationCode'
  | 'grant'
  /** `OAUTH_DEVICE#<hash>`, `OAUTH_USER_CODE#<hash>`: a device authorization by each of its codes. */
  | 'deviceAuthorization'
  | 'userCode'
  | 'userCodeFailures'
  /** The reconciler's one checkpoint item. */
  | 'reconcileCheckpoint'
  /** `ROUTE#<task id>`: the routing records published for a task, until they are withdrawn. */
  | 'appRoute'
  /** `WAKE_HOLDS#<container id>`, `WAKE_HOLDS#ALL`: the requests the wake endpoint holds, per container and in all. */
  | 'wakeHolds'
  /** `BUILD_SLOTS#<user id>`: the builds an account runs at once. */
  | 'buildSlots'
  /** `VOLUME#<id>`: a volume. */
  | 'volume'
  /** `SNAPSHOT#<id>`: a snapshot of a volume. */
  | 'snapshot';

/**
 * Families whose grant names the attributes too (`dynamodb:Attributes`), because they share a
 * partition with items the function must not read or change: the quota usage item lives in
 * `USER#<id>` next to the profile, and credential bookkeeping touches only `last_used_at`.
 */
export type AttributeFamily = 'quotaUsage' | 'credentialLastUsed' | 'tokenLastUsed' | 'volumeUsage' | 'snapshotState';

/** Partitions of the global secondary indexes, which only Query reads. */
export type IndexFamily =
  | 'containersOfOwner'
  | 'appsOfOwner'
  | 'grantsOfUser'
  | 'allUsers'
  | 'allContainers'
  | 'volumesOfOwner'
  | 'snapshotsOfVolume'
  | 'allVolumes';

/**
 * A function's access to the table. `read`: GetItem, BatchGetItem, Query, ConditionCheckItem.
 * `update`: those plus UpdateItem. `write`: those plus PutItem, DeleteItem, BatchWriteItem.
 */
export interface TableAccess {
  read?: ReadonlyArray<ItemFamily | IndexFamily>;
  update?: ReadonlyArray<ItemFamily | AttributeFamily>;
  write?: readonly ItemFamily[];
}

/** One access from several parts (a route's own, plus shared ones such as authentication). */
export function tableAccess(...parts: TableAccess[]): TableAccess {
  const union = <T>(pick: (part: TableAccess) => readonly T[] | undefined): T[] => [...new Set(parts.flatMap((part) => pick(part) ?? []))];
  const merged: TableAccess = {
    read: union((part) => part.read),
    update: union((part) => part.update),
    write: union((part) => part.write),
  };
  const access: TableAccess = {};
  if (merged.read?.length) access.read = merged.read;
  if (merged.update?.length) access.update = merged.update;
  if (merged.write?.length) access.write = merged.write;
  return access;
}
