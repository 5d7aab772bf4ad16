import { containerView } from '../../lib/containers/container.js';
import { containerService } from '../../lib/containers/wiring.js';
import { endpoint } from '../../lib/http/endpoint.js';
import { ok } from '../../lib/http/reply.js';

export const handler = endpoint('restartContainer', {}, async ({ principal, params }) => {
  return ok(containerView(await containerService.restart(principal, params.container_id!)));
});
