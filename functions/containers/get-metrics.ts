import { containerServiceWith } from '../../lib/wiring/containers.js';
import { taskUsage } from '#wiring/task-usage';
import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';

const containerService = containerServiceWith({ usage: taskUsage });

export const handler = endpoint(route.getContainerMetrics, { resolveCredential }, async ({ principal, params }) => {
  return ok(await containerService.metrics(principal, params.container_id!));
});
