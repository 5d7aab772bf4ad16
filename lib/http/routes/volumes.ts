import { tableAccess, type TableAccess } from '../../table-access.js';
import { authenticated, type Route, route } from './route.js';

/** Volumes and their snapshots (functions/volumes; docs/volumes.md, "Volumes"). */

/** A volume write: the volume, and the owner's volume gigabytes (or snapshot count) charged in the same transaction. */
const volumeWrite: TableAccess = { write: ['volume'], update: ['quotaUsage'] };
/** A snapshot's state is read back from the backend and recorded as it moves on (VolumeService.refreshed). */
const snapshotRecord: TableAccess = { write: ['snapshot'] };

export const listVolumes = /* @__PURE__ */ route({
  id: 'listVolumes',
  method: 'GET',
  path: '/api/v1/volumes',
  handler: 'functions/volumes/list.ts',
  access: 'api',
  scope: 'containers:read',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ read: ['volumesOfOwner', 'allVolumes'] }),
  answers: { page: 'Volume' },
  summary: "List volumes: the caller's own, or every volume for admins",
});

export const createVolume = /* @__PURE__ */ route({
  id: 'createVolume',
  method: 'POST',
  path: '/api/v1/volumes',
  handler: 'functions/volumes/create.ts',
  access: 'api',
  scope: 'containers:write',
  body: 'json',
  // A volume from a snapshot: a presigned GET of its object, in the job of a restore chore the task state function runs.
  permissions: /* @__PURE__ */ authenticated(/* @__PURE__ */ tableAccess(volumeWrite, snapshotRecord), {
    volumes: true,
    volumeChores: true,
    snapshotObjects: ['get'],
  }),
  alsoAnswers: [404, 409],
  answers: { data: 'Volume', status: 201 },
  summary: "Create a volume, empty or with a snapshot's content",
});

export const getVolume = /* @__PURE__ */ route({
  id: 'getVolume',
  method: 'GET',
  path: '/api/v1/volumes/{volume_id}',
  handler: 'functions/volumes/get.ts',
  access: 'api',
  scope: 'containers:read',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ read: ['volume'] }),
  answers: { data: 'Volume' },
  summary: 'Get a volume',
});

export const deleteVolume = /* @__PURE__ */ route({
  id: 'deleteVolume',
  method: 'DELETE',
  path: '/api/v1/volumes/{volume_id}',
  handler: 'functions/volumes/delete.ts',
  access: 'api',
  scope: 'containers:write',
  body: 'none',
  // It empties the volume with a chore task, whose job the task state function follows (docs/volumes.md, "Volumes on AWS").
  permissions: /* @__PURE__ */ authenticated(volumeWrite, { volumes: true, volumeChores: true }),
  alsoAnswers: [409],
  answers: { acknowledges: 'deleted' },
  summary: 'Delete a volume and its content; only while no container mounts it',
});

export const createSnapshot = /* @__PURE__ */ route({
  id: 'createSnapshot',
  method: 'POST',
  path: '/api/v1/volumes/{volume_id}/snapshots',
  handler: 'functions/volumes/create-snapshot.ts',
  access: 'api',
  scope: 'containers:write',
  body: 'none',
  // The container a volume is attached to: whether its task may write during the copy. On AWS a chore task uploads the
  // volume's tar in parts through a presigned form this function signs (docs/volumes.md, "Snapshots on AWS").
  permissions: /* @__PURE__ */ authenticated(
    /* @__PURE__ */ tableAccess({ read: ['volume', 'container'], update: ['quotaUsage'] }, snapshotRecord),
    { volumeChores: true, snapshotObjects: ['upload-parts'] },
  ),
  answers: { data: 'Snapshot' },
  summary: "Start a snapshot of a volume's content",
});

export const listSnapshots = /* @__PURE__ */ route({
  id: 'listSnapshots',
  method: 'GET',
  path: '/api/v1/volumes/{volume_id}/snapshots',
  handler: 'functions/volumes/list-snapshots.ts',
  access: 'api',
  scope: 'containers:read',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated(/* @__PURE__ */ tableAccess({ read: ['volume', 'snapshotsOfVolume'] }, snapshotRecord)),
  answers: { page: 'Snapshot' },
  summary: "List a volume's snapshots, newest first",
});

export const downloadSnapshot = /* @__PURE__ */ route({
  id: 'downloadSnapshot',
  method: 'GET',
  path: '/api/v1/volumes/{volume_id}/snapshots/{snapshot_id}/download',
  handler: 'functions/volumes/download-snapshot.ts',
  access: 'api',
  scope: 'containers:read',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated(snapshotRecord, { snapshotObjects: ['get'] }),
  alsoAnswers: [409],
  answers: { data: 'SnapshotDownload' },
  summary: "Where a snapshot's content can be downloaded as a gzipped tar, until the URL expires",
});

export const deleteSnapshot = /* @__PURE__ */ route({
  id: 'deleteSnapshot',
  method: 'DELETE',
  path: '/api/v1/volumes/{volume_id}/snapshots/{snapshot_id}',
  handler: 'functions/volumes/delete-snapshot.ts',
  access: 'api',
  scope: 'containers:write',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated(/* @__PURE__ */ tableAccess({ update: ['quotaUsage'] }, snapshotRecord), {
    snapshotObjects: ['delete'],
  }),
  answers: { acknowledges: 'deleted' },
  summary: 'Delete a snapshot',
});

/** This area's rows, in the order the table lists them. */
export const volumeRoutes = [
  listVolumes,
  createVolume,
  getVolume,
  deleteVolume,
  createSnapshot,
  listSnapshots,
  downloadSnapshot,
  deleteSnapshot,
] as const satisfies readonly Route[];
