import { containerServiceWith } from '../../lib/wiring/containers.js';
import { containerRuntime } from '#wiring/container-runtime';
import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { registryCredentialVault } from '#wiring/registry-credentials';
import { containerLeftovers } from '#wiring/container-leftovers';

const containerService = containerServiceWith({
  runtime: containerRuntime,
  registryCredentials: registryCredentialVault,
  leftovers: containerLeftovers,
});

export const handler = endpoint(route.deleteContainer, { resolveCredential }, async ({ principal, params }) => {
  await containerService.delete(principal, params.container_id!);
  return ok('deleted');
});
