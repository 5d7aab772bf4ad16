import type { Release, ReleaseCause } from '../../containers/release.js';
import { type WorkloadJson, workloadFromJson, workloadToJson } from '../../containers/workload.js';
import { keys } from '../keys.js';
import { asStored, type Item } from './item.js';

type StoredReleaseItem = {
  container_id: string;
  version: number;
  cause: ReleaseCause;
  workload: Partial<WorkloadJson>;
  image_digest: string | null;
  deploy_id: string | null;
  rolled_back_to: number | null;
  created_at: string;
};

/** A release, in its container's partition; its workload stored as the container's is, so old fields read their fallback. */
export const releaseEntity = {
  key: keys.release,
  toItem: (release: Release): Item => ({
    ...keys.release(release.containerId, release.version),
    entity: 'release',
    container_id: release.containerId,
    version: release.version,
    cause: release.cause,
    workload: workloadToJson(release.workload),
    image_digest: release.imageDigest,
    deploy_id: release.deployId,
    rolled_back_to: release.rolledBackTo,
    created_at: release.createdAt,
  }),
  fromItem(item: Item): Release {
    const stored = asStored<StoredReleaseItem>(item);
    return {
      containerId: stored.container_id,
      version: stored.version,
      cause: stored.cause,
      workload: workloadFromJson(stored.workload),
      imageDigest: stored.image_digest ?? null,
      deployId: stored.deploy_id ?? null,
      rolledBackTo: stored.rolled_back_to ?? null,
      createdAt: stored.created_at,
    };
  },
};
