import { containerView } from '../../lib/containers/container.js';
import { containerServiceWith } from '../../lib/wiring/containers.js';
import { containerRuntime } from '#wiring/container-runtime';
import { deferredWork } from '../../lib/wiring/deferred-work.js';
import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';

const containerService = containerServiceWith({ runtime: containerRuntime, deferredWork });

export const handler = endpoint(route.startContainer, { resolveCredential }, async ({ principal, params }) => {
  return ok(containerView(await containerService.start(principal, params.container_id!)));
});
