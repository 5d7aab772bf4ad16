import { containerView } from '../../lib/containers/container.js';
import { createContainerBody } from '../../lib/containers/schemas.js';
import { workloadFromJson } from '../../lib/containers/workload.js';
import { containerServiceWith } from '../../lib/wiring/containers.js';
import { containerRuntime } from '#wiring/container-runtime';
import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';

const containerService = containerServiceWith({ runtime: containerRuntime });

export const handler = endpoint(route.createContainer, { body: createContainerBody, resolveCredential }, async ({ principal, body }) => {
  const container = await containerService.create(principal, { hostname: body.hostname, ...workloadFromJson(body) });
  return ok(containerView(container));
});
