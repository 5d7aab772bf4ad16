import { containerService } from '../../lib/containers/wiring.js';
import { endpoint } from '../../lib/http/endpoint.js';
import { ok } from '../../lib/http/reply.js';

export const handler = endpoint('getContainerMetrics', {}, async ({ principal, params }) => {
  return ok(await containerService.metrics(principal, params.container_id!));
});
