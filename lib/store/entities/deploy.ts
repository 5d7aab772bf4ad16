import type { Deploy, DeployState } from '../../deploys/deploy.js';
import { keys } from '../keys.js';
import { asStored, type Item } from './item.js';

type StoredDeployItem = {
  id: string;
  container_id: string;
  user_id: string;
  state: DeployState;
  state_reason: string | null;
  size_bytes: number;
  dockerfile: string;
  build_args: Record<string, string>;
  upload_expires_at: string;
  build_id: string | null;
  build_version: number;
  image: string | null;
  release: number | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
};

/** The stored names of what a deploy's state changes write. */
export const DEPLOY_ATTRIBUTE = {
  stateReason: 'state_reason',
  buildId: 'build_id',
  buildVersion: 'build_version',
  image: 'image',
  release: 'release',
  startedAt: 'started_at',
  finishedAt: 'finished_at',
} as const;

/** The stored names of what a transition's guard (TransitionGuard) checks. */
export const DEPLOY_GUARD_ATTRIBUTE = { userId: 'user_id', uploadExpiresAt: 'upload_expires_at' } as const;

/** A deploy, in its container's partition (the container's grant covers it). */
export const deployEntity = {
  key: keys.deploy,
  toItem: (deploy: Deploy): Item => ({
    ...keys.deploy(deploy.containerId, deploy.id),
    entity: 'deploy',
    id: deploy.id,
    container_id: deploy.containerId,
    [DEPLOY_GUARD_ATTRIBUTE.userId]: deploy.userId,
    state: deploy.state,
    state_reason: deploy.stateReason,
    size_bytes: deploy.sizeBytes,
    dockerfile: deploy.dockerfile,
    build_args: deploy.buildArgs,
    [DEPLOY_GUARD_ATTRIBUTE.uploadExpiresAt]: deploy.uploadExpiresAt,
    build_id: deploy.buildId,
    build_version: deploy.buildVersion,
    image: deploy.image,
    release: deploy.release,
    created_at: deploy.createdAt,
    started_at: deploy.startedAt,
    finished_at: deploy.finishedAt,
  }),
  fromItem(item: Item): Deploy {
    const stored = asStored<StoredDeployItem>(item);
    return {
      id: stored.id,
      containerId: stored.container_id,
      userId: stored.user_id,
      state: stored.state,
      stateReason: stored.state_reason ?? null,
      sizeBytes: stored.size_bytes,
      dockerfile: stored.dockerfile,
      buildArgs: stored.build_args ?? {},
      uploadExpiresAt: stored.upload_expires_at,
      buildId: stored.build_id ?? null,
      buildVersion: stored.build_version ?? 0,
      image: stored.image ?? null,
      release: stored.release ?? null,
      createdAt: stored.created_at,
      startedAt: stored.started_at ?? null,
      finishedAt: stored.finished_at ?? null,
    };
  },
};
