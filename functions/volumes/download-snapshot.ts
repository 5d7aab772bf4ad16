import { volumeBackend } from '#wiring/volume-snapshots';
import { volumeServiceWith } from '../../lib/wiring/volumes.js';
import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';

const volumeService = volumeServiceWith(volumeBackend);

export const handler = endpoint(route.downloadSnapshot, { resolveCredential }, async ({ principal, params }) => {
  const { url, expiresAt } = await volumeService.downloadUrl(principal, params.volume_id!, params.snapshot_id!);
  return ok({ url, expires_at: expiresAt });
});
