import { volumeBackend } from '#wiring/volume-creation';
import { runPolicy } from '#wiring/run-policy';
import { createVolumeBody, volumeView } from '../../lib/volumes/volume.js';
import { volumeServiceWith } from '../../lib/wiring/volumes.js';
import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { json } from '../../lib/http/reply.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';

const volumeService = volumeServiceWith(volumeBackend);

// Where the runtime runs only admins' code (the process runtime), only admins keep volumes on it.
export const handler = endpoint(
  route.createVolume,
  { body: createVolumeBody, resolveCredential, authorize: runPolicy.assertMayRun },
  async ({ principal, body }) => json(201, { data: volumeView(await volumeService.create(principal, body)) }),
);
