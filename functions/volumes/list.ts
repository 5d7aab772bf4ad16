import { volumeBackend } from '#wiring/volume-backend';
import { volumeView } from '../../lib/volumes/volume.js';
import { volumeServiceWith } from '../../lib/wiring/volumes.js';
import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { pageQuerySchema, pageReply } from '../../lib/http/pagination.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';

const volumeService = volumeServiceWith(volumeBackend);

export const handler = endpoint(route.listVolumes, { query: pageQuerySchema, resolveCredential }, async (request) => {
  const page = await volumeService.list(request.principal, request.query);
  return pageReply(request, { ...page, items: page.items.map(volumeView) });
});
