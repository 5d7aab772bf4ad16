import { containerView } from '../../lib/containers/container.js';
import { createContainerBody } from '../../lib/containers/schemas.js';
import { workloadFromJson } from '../../lib/containers/workload.js';
import { containerServiceWith } from '../../lib/wiring/containers.js';
import { containerRuntime, runPolicy } from '#wiring/container-runtime';
import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { imageDigests } from '#wiring/image-digests';

const containerService = containerServiceWith({ runtime: containerRuntime, runPolicy, imageDigests });

export const handler = endpoint(
  route.createContainer,
  { body: createContainerBody, resolveCredential, authorize: runPolicy.assertMayRun },
  async ({ principal, body }) => {
    const container = await containerService.create(principal, { hostname: body.hostname, ...workloadFromJson(body) });
    return ok(containerView(container));
  },
);
