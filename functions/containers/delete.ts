import { containerService } from '../../lib/containers/wiring.js';
import { endpoint } from '../../lib/http/endpoint.js';
import { ok } from '../../lib/http/reply.js';

export const handler = endpoint('deleteContainer', {}, async ({ principal, params }) => {
  await containerService.delete(principal, params.container_id!);
  return ok('deleted');
});
