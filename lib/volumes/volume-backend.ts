/*
 * Where a volume's bytes live (issue 34), agreed before the local and the AWS halves were built
 * apart: an engine volume per volume on the docker runtime (named and labelled with the stack, the
 * account and the volume), a directory under DATA_DIR on the process runtime, an EFS access point
 * per volume on AWS (its own POSIX user and root directory). The volume's record lives in the
 * table; the backend only holds its bytes.
 */

export interface VolumeRef {
  accountId: string;
  volumeId: string;
  sizeGb: number;
}

/** What a runtime needs to mount a volume into a task: the record's id and the backend's own name for it. */
export interface TaskMount {
  volumeId: string;
  /** Absolute path in the container. */
  path: string;
  /** The engine volume's name, the directory, or the EFS access point id. */
  backendRef: string;
}

export interface VolumeBackend {
  /** Makes the volume's storage, empty or with a snapshot's content; the same volume twice answers the same ref. */
  create(volume: VolumeRef, fromSnapshot?: SnapshotRef): Promise<{ backendRef: string }>;
  /** Removes it for good; gone is not an error. Only ever called for a detached volume. */
  delete(volume: VolumeRef & { backendRef: string }): Promise<void>;
  /** Bytes in use now. */
  usedBytes(volume: VolumeRef & { backendRef: string }): Promise<number>;
  /** Starts a snapshot of the volume's content; progress is read back with `describeSnapshot`. */
  snapshot(volume: VolumeRef & { backendRef: string }, snapshotId: string): Promise<SnapshotRef>;
  describeSnapshot(snapshot: SnapshotRef): Promise<{ state: 'creating' | 'ready' | 'failed'; sizeBytes?: number; reason?: string }>;
  /** Where the snapshot's gzipped tar can be fetched (a presigned URL on AWS, a local route here), until it expires. */
  downloadUrl(snapshot: SnapshotRef): Promise<{ url: string; expiresAt: string }>;
  deleteSnapshot(snapshot: SnapshotRef): Promise<void>;
}

export interface SnapshotRef {
  accountId: string;
  volumeId: string;
  snapshotId: string;
  /** The backend's own name for the snapshot's content (an engine-side tar, an S3 key). */
  backendRef: string;
}
