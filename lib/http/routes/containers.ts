import { tableAccess, type TableAccess } from '../../table-access.js';
import { authenticated, type Route, route } from './route.js';

/** Containers: their lifecycle, metrics and logs (functions/containers). */

/** A container write: the container, and the owner's quota usage charged in the same transaction. */
export const containerUpdate: TableAccess = { update: ['container', 'quotaUsage'] };
/** A write that mounts or lets go of volumes in the same transaction (lib/store/dynamo-volume-store.ts, volumeClaimItems). */
export const volumeClaims: TableAccess = { update: ['volume'] };
/** A launch reads the volumes its task mounts, to resolve them (lib/containers/container-volumes.ts). */
export const volumeMountReads: TableAccess = { read: ['volume'] };

export const listContainers = /* @__PURE__ */ route({
  id: 'listContainers',
  method: 'GET',
  path: '/api/v1/containers',
  handler: 'functions/containers/list.ts',
  access: 'api',
  scope: 'containers:read',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ read: ['containersOfOwner', 'allContainers'] }),
  answers: { page: 'Container' },
  summary: "List containers: the caller's own, or every container for admins",
});

export const createContainer = /* @__PURE__ */ route({
  id: 'createContainer',
  method: 'POST',
  path: '/api/v1/containers',
  handler: 'functions/containers/create.ts',
  access: 'api',
  scope: 'containers:write',
  body: 'json',
  permissions: /* @__PURE__ */ authenticated(
    /* @__PURE__ */ tableAccess(containerUpdate, volumeClaims, { write: ['container', 'hostname'] }),
    {
      ecs: ['run', 'stop'],
      registryCredentials: true,
    },
  ),
  alsoAnswers: [404, 409, 503],
  answers: { data: 'Container' },
  summary: 'Create a container and start its first task',
});

export const getContainer = /* @__PURE__ */ route({
  id: 'getContainer',
  method: 'GET',
  path: '/api/v1/containers/{container_id}',
  handler: 'functions/containers/get.ts',
  access: 'api',
  scope: 'containers:read',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ read: ['container'] }),
  answers: { data: 'Container' },
  summary: 'Get a container',
});

/** A change of what a container runs: the container and its new release, with the quota charge. */
export const releaseWrite: TableAccess = /* @__PURE__ */ tableAccess(containerUpdate, { write: ['container'] });

export const updateContainer = /* @__PURE__ */ route({
  id: 'updateContainer',
  method: 'PATCH',
  path: '/api/v1/containers/{container_id}',
  handler: 'functions/containers/update.ts',
  access: 'api',
  scope: 'containers:write',
  body: 'json',
  permissions: /* @__PURE__ */ authenticated(/* @__PURE__ */ tableAccess(releaseWrite, volumeClaims), { registryCredentials: true }),
  alsoAnswers: [404, 409],
  answers: { data: 'Container' },
  summary: 'Change what a container runs from its next start or restart (a new release)',
});

export const deleteContainer = /* @__PURE__ */ route({
  id: 'deleteContainer',
  method: 'DELETE',
  path: '/api/v1/containers/{container_id}',
  handler: 'functions/containers/delete.ts',
  access: 'api',
  scope: 'containers:write',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated(
    /* @__PURE__ */ tableAccess(containerUpdate, volumeClaims, { write: ['container', 'hostname'] }),
    {
      ecs: ['stop'],
      registryCredentials: true,
    },
  ),
  alsoAnswers: [409, 503],
  answers: { acknowledges: 'deleted' },
  summary: 'Stop and delete a container, freeing its hostname',
});

export const startContainer = /* @__PURE__ */ route({
  id: 'startContainer',
  method: 'POST',
  path: '/api/v1/containers/{container_id}/start',
  handler: 'functions/containers/start.ts',
  access: 'api',
  scope: 'containers:write',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated(/* @__PURE__ */ tableAccess(containerUpdate, volumeMountReads), {
    ecs: ['run', 'stop', 'describe'],
  }),
  timeoutSeconds: 29,
  alsoAnswers: [409, 503, 504],
  answers: { data: 'Container' },
  summary: 'Start a container and wait until it runs',
});

export const stopContainer = /* @__PURE__ */ route({
  id: 'stopContainer',
  method: 'POST',
  path: '/api/v1/containers/{container_id}/stop',
  handler: 'functions/containers/stop.ts',
  access: 'api',
  scope: 'containers:write',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated(containerUpdate, { ecs: ['stop'] }),
  alsoAnswers: [409, 503],
  answers: { data: 'Container' },
  summary: 'Stop a container',
});

export const restartContainer = /* @__PURE__ */ route({
  id: 'restartContainer',
  method: 'POST',
  path: '/api/v1/containers/{container_id}/restart',
  handler: 'functions/containers/restart.ts',
  access: 'api',
  scope: 'containers:write',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated(/* @__PURE__ */ tableAccess(containerUpdate, volumeMountReads), {
    ecs: ['run', 'stop', 'describe'],
  }),
  timeoutSeconds: 29,
  alsoAnswers: [409, 503, 504],
  answers: { data: 'Container' },
  summary: 'Restart a container on a new task and wait until it runs',
});

export const getContainerMetrics = /* @__PURE__ */ route({
  id: 'getContainerMetrics',
  method: 'GET',
  path: '/api/v1/containers/{container_id}/metrics',
  handler: 'functions/containers/get-metrics.ts',
  access: 'api',
  scope: 'containers:read',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ read: ['container'] }, { metrics: true }),
  answers: { data: 'Metrics' },
  summary: "A container's current CPU, memory and disk use",
});

export const getContainerMetricsHistory = /* @__PURE__ */ route({
  id: 'getContainerMetricsHistory',
  method: 'GET',
  path: '/api/v1/containers/{container_id}/metrics/history',
  handler: 'functions/containers/get-metrics-history.ts',
  access: 'api',
  scope: 'containers:read',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ read: ['container'] }, { metrics: true }),
  answers: { page: 'MetricsPoint' },
  summary: "A container's CPU, memory and disk use minute by minute, oldest first (`minutes` 1..1440, default 60)",
});

export const getContainerLogs = /* @__PURE__ */ route({
  id: 'getContainerLogs',
  method: 'GET',
  path: '/api/v1/containers/{container_id}/logs',
  handler: 'functions/containers/get-logs.ts',
  access: 'api',
  scope: 'containers:read',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ read: ['container'] }, { logs: true }),
  answers: { page: 'LogLine' },
  summary: "A container's output, oldest first, across its recent tasks",
});

export const listReleases = /* @__PURE__ */ route({
  id: 'listReleases',
  method: 'GET',
  path: '/api/v1/containers/{container_id}/releases',
  handler: 'functions/containers/list-releases.ts',
  access: 'api',
  scope: 'containers:read',
  body: 'none',
  // Each release's `image_available`: on AWS ECR's DescribeImages for built images (docs/deploys.md, "Retention").
  permissions: /* @__PURE__ */ authenticated({ read: ['container'] }, { builds: ['describeImages'] }),
  answers: { page: 'Release' },
  summary: "A container's releases, newest first: each version's workload with its image pinned by digest",
});

export const rollbackRelease = /* @__PURE__ */ route({
  id: 'rollbackRelease',
  method: 'POST',
  path: '/api/v1/containers/{container_id}/releases/{version}/rollback',
  handler: 'functions/containers/rollback.ts',
  access: 'api',
  scope: 'containers:write',
  body: 'none',
  // A release whose built image ECR expired is refused (DescribeImages).
  permissions: /* @__PURE__ */ authenticated(releaseWrite, { ecs: ['run', 'stop', 'describe'], builds: ['describeImages'] }),
  timeoutSeconds: 29,
  alsoAnswers: [409, 503, 504],
  answers: { data: 'Container' },
  summary: "A new release with an earlier one's workload, rolled to without downtime (a stopped container takes it at its next start)",
});

export const createDeploy = /* @__PURE__ */ route({
  id: 'createDeploy',
  method: 'POST',
  path: '/api/v1/containers/{container_id}/deploys',
  handler: 'functions/deploys/create.ts',
  access: 'api',
  scope: 'containers:write',
  body: 'json',
  permissions: /* @__PURE__ */ authenticated({ read: ['container'], write: ['container', 'buildSlots'] }, { builds: ['upload'] }),
  alsoAnswers: [413, 501],
  answers: { data: 'Deploy', status: 201 },
  summary: 'Deploy from source: answers the deploy and where to PUT the gzipped tar of its build context',
});

export const listDeploys = /* @__PURE__ */ route({
  id: 'listDeploys',
  method: 'GET',
  path: '/api/v1/containers/{container_id}/deploys',
  handler: 'functions/deploys/list.ts',
  access: 'api',
  scope: 'containers:read',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ read: ['container'], update: ['container', 'buildSlots'] }, { builds: ['discard'] }),
  answers: { page: 'Deploy' },
  summary: "A container's deploys, newest first",
});

export const getDeploy = /* @__PURE__ */ route({
  id: 'getDeploy',
  method: 'GET',
  path: '/api/v1/containers/{container_id}/deploys/{deploy_id}',
  handler: 'functions/deploys/get.ts',
  access: 'api',
  scope: 'containers:read',
  body: 'none',
  // An upload that expired unused is settled (failed, its build slot freed) when read.
  permissions: /* @__PURE__ */ authenticated({ read: ['container'], update: ['container', 'buildSlots'] }, { builds: ['discard'] }),
  answers: { data: 'Deploy' },
  summary: 'A deploy: its state, the built image and the release it made',
});

export const getDeployLogs = /* @__PURE__ */ route({
  id: 'getDeployLogs',
  method: 'GET',
  path: '/api/v1/containers/{container_id}/deploys/{deploy_id}/logs',
  handler: 'functions/deploys/get-logs.ts',
  access: 'api',
  scope: 'containers:read',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ read: ['container'], update: ['container', 'buildSlots'] }, { builds: ['discard', 'logs'] }),
  answers: { page: 'LogLine' },
  summary: "A deploy's build output, oldest first, in the shape of a container's logs",
});

/** This area's rows, in the order the table lists them. */
export const containerRoutes = [
  listContainers,
  createContainer,
  getContainer,
  updateContainer,
  deleteContainer,
  startContainer,
  stopContainer,
  restartContainer,
  getContainerMetrics,
  getContainerMetricsHistory,
  getContainerLogs,
  listReleases,
  rollbackRelease,
  createDeploy,
  listDeploys,
  getDeploy,
  getDeployLogs,
] as const satisfies readonly Route[];
