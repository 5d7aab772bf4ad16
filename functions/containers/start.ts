import { containerView } from '../../lib/containers/container.js';
import { containerServiceWith } from '../../lib/wiring/containers.js';
import { containerRuntime, runPolicy } from '#wiring/container-runtime';
import { deferredWork } from '../../lib/wiring/deferred-work.js';
import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';

const containerService = containerServiceWith({ runtime: containerRuntime, deferredWork, runPolicy });

export const handler = endpoint(
  route.startContainer,
  { resolveCredential, authorize: runPolicy.assertMayRun },
  async ({ principal, params }) => {
    return ok(containerView(await containerService.start(principal, params.container_id!)));
  },
);
