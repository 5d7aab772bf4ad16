import { volumeBackend } from '#wiring/volume-snapshots';
import { snapshotView } from '../../lib/volumes/volume.js';
import { volumeServiceWith } from '../../lib/wiring/volumes.js';
import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';

const volumeService = volumeServiceWith(volumeBackend);

export const handler = endpoint(route.createSnapshot, { resolveCredential }, async ({ principal, params }) => {
  return ok(snapshotView(await volumeService.snapshot(principal, params.volume_id!)));
});
