import { volumeBackend } from '#wiring/volume-snapshots';
import { volumeServiceWith } from '../../lib/wiring/volumes.js';
import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';

const volumeService = volumeServiceWith(volumeBackend);

export const handler = endpoint(route.deleteSnapshot, { resolveCredential }, async ({ principal, params }) => {
  await volumeService.deleteSnapshot(principal, params.volume_id!, params.snapshot_id!);
  return ok('deleted');
});
