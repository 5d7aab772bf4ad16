import type { QuotaUsage } from '../../containers/quota.js';
import { keys } from '../keys.js';
import { asStored, type Item } from './item.js';

/** A user's quota use; absent until their first container. Only ever changed with ADD. */
interface StoredQuotaUsageItem {
  containers?: number;
  running_cpu?: number;
  running_memory_mb?: number;
  /** Gigabytes of the user's volumes (QUOTA_MAX_VOLUME_GB), and how many snapshots they keep (QUOTA_MAX_SNAPSHOTS). */
  volume_gb?: number;
  snapshots?: number;
}

export const quotaUsageEntity = {
  key: keys.quotaUsage,
  /** The attributes the conditions and ADD expressions name. */
  attributes: {
    containers: 'containers',
    runningCpu: 'running_cpu',
    runningMemoryMb: 'running_memory_mb',
    volumeGb: 'volume_gb',
    snapshots: 'snapshots',
  },
  /** Set with every charge, naming whose usage the item is. */
  ownerAttribute: 'user_id',
  fromItem(item: Item | undefined): QuotaUsage {
    const stored = item ? asStored<StoredQuotaUsageItem>(item) : {};
    return { containers: stored.containers ?? 0, runningCpu: stored.running_cpu ?? 0, runningMemoryMb: stored.running_memory_mb ?? 0 };
  },
};
