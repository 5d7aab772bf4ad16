import { containerView } from '../../lib/containers/container.js';
import { updateContainerBody } from '../../lib/containers/schemas.js';
import { workloadChangesFromJson } from '../../lib/containers/workload.js';
import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { containerServiceWith } from '../../lib/wiring/containers.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { imageDigests } from '#wiring/image-digests';
import { runPolicy } from '#wiring/run-policy';
import { registryCredentialVault } from '#wiring/registry-credentials';

// The policy: a change of command or image is refused where the runtime may not run the caller's code; the digests pin its release.
const containerService = containerServiceWith({ runPolicy, imageDigests, registryCredentials: registryCredentialVault });

export const handler = endpoint(
  route.updateContainer,
  { body: updateContainerBody, resolveCredential },
  async ({ principal, params, body }) => {
    const container = await containerService.update(
      principal,
      params.container_id!,
      workloadChangesFromJson(body),
      body.registry_credentials,
    );
    return ok(containerView(container));
  },
);
