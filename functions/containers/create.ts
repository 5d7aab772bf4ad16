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
import { registryCredentialVault } from '#wiring/registry-credentials';

const containerService = containerServiceWith({
  runtime: containerRuntime,
  runPolicy,
  imageDigests,
  registryCredentials: registryCredentialVault,
});

export const handler = endpoint(
  route.createContainer,
  { body: createContainerBody, resolveCredential, authorize: runPolicy.assertMayRun },
  async ({ principal, body }) => {
    const container = await containerService.create(
      principal,
      { hostname: body.hostname, ...workloadFromJson(body) },
      body.registry_credentials,
    );
    return ok(containerView(container));
  },
);
