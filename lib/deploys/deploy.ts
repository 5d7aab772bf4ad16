import type { UploadTarget } from './builds.js';

/**
 * A deploy's states (docs/deploys.md, "Deploys"): waiting_for_upload → building → deploying →
 * live, or failed (with `state_reason`), or superseded when a newer deploy of the same container
 * went live first.
 */
export const DEPLOY_STATES = ['waiting_for_upload', 'building', 'deploying', 'live', 'failed', 'superseded'] as const;
export type DeployState = (typeof DEPLOY_STATES)[number];

export const FINAL_DEPLOY_STATES: readonly DeployState[] = ['live', 'failed', 'superseded'];

/** The states in which a deploy holds one of its account's build slots. */
export const ACTIVE_DEPLOY_STATES: readonly DeployState[] = ['waiting_for_upload', 'building'];

export interface Deploy {
  /** UUIDv7: deploys of a container order by it, and the later one wins. */
  id: string;
  containerId: string;
  /** The container's owner, whose build slot the deploy holds. */
  userId: string;
  state: DeployState;
  stateReason: string | null;
  sizeBytes: number;
  dockerfile: string;
  buildArgs: Record<string, string>;
  /** When the upload URL stops being accepted (ISO 8601). */
  uploadExpiresAt: string;
  buildId: string | null;
  /** The highest build status version applied, so late or repeated events are ignored. */
  buildVersion: number;
  /** The built image, pinned by digest, once built. */
  image: string | null;
  /** The container's release this deploy made, once live. */
  release: number | null;
  createdAt: string;
  /** When the build started, and when the deploy reached a final state. */
  startedAt: string | null;
  finishedAt: string | null;
}

export interface DeployView {
  id: string;
  container_id: string;
  state: DeployState;
  state_reason: string | null;
  size_bytes: number;
  dockerfile: string;
  build_args: Record<string, string>;
  image: string | null;
  release: number | null;
  /** Where to PUT the context: answered by the create only (it carries a single-use signature), null afterwards. */
  upload: { url: string; method: 'PUT'; headers: Record<string, string>; expires_at: string } | null;
  upload_expires_at: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

export const deployView = (deploy: Deploy, upload?: UploadTarget): DeployView => ({
  id: deploy.id,
  container_id: deploy.containerId,
  state: deploy.state,
  state_reason: deploy.stateReason,
  size_bytes: deploy.sizeBytes,
  dockerfile: deploy.dockerfile,
  build_args: deploy.buildArgs,
  image: deploy.image,
  release: deploy.release,
  upload: upload ? { url: upload.url, method: upload.method, headers: upload.headers, expires_at: upload.expiresAt } : null,
  upload_expires_at: deploy.uploadExpiresAt,
  created_at: deploy.createdAt,
  started_at: deploy.startedAt,
  finished_at: deploy.finishedAt,
});

/** What a state change writes besides the state. */
export type DeployChange = Partial<
  Pick<Deploy, 'stateReason' | 'buildId' | 'buildVersion' | 'image' | 'release' | 'startedAt' | 'finishedAt'>
> & {
  state: DeployState;
};

/** An account's build slots as read: deploy id → epoch ms each is held until, and the version of that read. */
export interface BuildSlotsRead {
  userId: string;
  slots: Readonly<Record<string, number>>;
  generation: number;
}

/** A transition's further conditions: the deploy is this account's, and its upload URL had not expired at `uploadOpenAt` (ISO). */
export interface TransitionGuard {
  userId: string;
  uploadOpenAt: string;
}

export interface DeployStore {
  create(deploy: Deploy): Promise<void>;
  get(containerId: string, deployId: string): Promise<Deploy | undefined>;
  /** Newest first. */
  list(containerId: string, page: { limit: number; cursor?: string }): Promise<{ items: Deploy[]; nextCursor?: string }>;
  /**
   * Moves a deploy on, on condition that it is in one of `from` (and, with `buildVersion`, that no
   * newer build status was applied); undefined when it was not.
   */
  transition(
    containerId: string,
    deployId: string,
    from: readonly DeployState[],
    change: DeployChange,
    guard?: TransitionGuard,
  ): Promise<Deploy | undefined>;
  /**
   * Takes one of the account's build slots for the deploy, until `until` (epoch ms), when fewer
   * than `max` are held; slots past their time count as free (a build whose end was never
   * recorded). False when all are taken.
   */
  takeBuildSlot(read: BuildSlotsRead, deployId: string, until: number, max: number, now: number): Promise<boolean>;
  /** The account's build slots as they are now, for `takeBuildSlot`: read beside other reads, taken on condition nothing changed since. */
  readBuildSlots(userId: string): Promise<BuildSlotsRead>;
  freeBuildSlot(userId: string, deployId: string): Promise<void>;
}

/** Build logs: the lines a build wrote, in the shape of a container's logs. */
export interface BuildLogs {
  read(
    /** `buildId`: the builder's id of the deploy's build, once started (CodeBuild names its log stream after it). */
    ref: { accountId: string; containerId: string; deployId: string; buildId?: string | null },
    query: { limit: number; since?: string; cursor?: string },
  ): Promise<{ lines: Array<{ timestamp: string; stream: 'stdout' | 'stderr'; message: string }>; nextCursor?: string }>;
}
