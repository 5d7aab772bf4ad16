import { containerView } from '../../lib/containers/container.js';
import { containerServiceWith } from '../../lib/wiring/containers.js';
import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { pageQuerySchema, pageReply } from '../../lib/http/pagination.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';

const containerService = containerServiceWith();

export const handler = endpoint(route.listContainers, { query: pageQuerySchema, resolveCredential }, async (request) => {
  const page = await containerService.list(request.principal, request.query);
  return pageReply(request, { ...page, items: page.items.map(containerView) });
});
