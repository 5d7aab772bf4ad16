import { containerView } from '../../lib/containers/container.js';
import { containerServiceWith } from '../../lib/wiring/containers.js';
import { endpoint } from '../../lib/http/endpoint.js';
import { ok } from '../../lib/http/reply.js';
import { resolveCredential } from '../../lib/wiring/identity.js';

const containerService = containerServiceWith();

export const handler = endpoint('getContainer', { resolveCredential }, async ({ principal, params }) => {
  return ok(containerView(await containerService.get(principal, params.container_id!)));
});
