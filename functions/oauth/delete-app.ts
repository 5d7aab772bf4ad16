import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { applicationService } from '../../lib/wiring/oauth.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';

export const handler = endpoint(route.deleteApp, { resolveCredential }, async ({ principal, params }) => {
  await applicationService.deleteApp(principal, params.app_id!);
  return ok('deleted');
});
