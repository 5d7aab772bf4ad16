import { volumeBackend } from '#wiring/volume-removal';
import { volumeServiceWith } from '../../lib/wiring/volumes.js';
import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';

const volumeService = volumeServiceWith(volumeBackend);

export const handler = endpoint(route.deleteVolume, { resolveCredential }, async ({ principal, params }) => {
  await volumeService.delete(principal, params.volume_id!);
  return ok('deleted');
});
