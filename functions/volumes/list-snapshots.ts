import { volumeBackend } from '#wiring/volume-backend';
import { snapshotView } from '../../lib/volumes/volume.js';
import { volumeServiceWith } from '../../lib/wiring/volumes.js';
import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { pageQuerySchema, pageReply } from '../../lib/http/pagination.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';

const volumeService = volumeServiceWith(volumeBackend);

export const handler = endpoint(route.listSnapshots, { query: pageQuerySchema, resolveCredential }, async (request) => {
  const page = await volumeService.snapshots(request.principal, request.params.volume_id!, request.query);
  return pageReply(request, { ...page, items: page.items.map(snapshotView) });
});
