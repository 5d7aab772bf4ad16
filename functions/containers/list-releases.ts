import { imageDigests } from '#wiring/image-digests';
import { endpoint } from '../../lib/http/endpoint.js';
import { pageQuerySchema, pageReply } from '../../lib/http/pagination.js';
import * as route from '../../lib/http/routes.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { containerServiceWith } from '../../lib/wiring/containers.js';

const containerService = containerServiceWith({ imageDigests });

export const handler = endpoint(route.listReleases, { query: pageQuerySchema, resolveCredential }, async (request) => {
  return pageReply(request, await containerService.listReleases(request.principal, request.params.container_id!, request.query));
});
