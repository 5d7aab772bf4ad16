import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { rotatedOAuthAppView } from '../../lib/oauth/views.js';
import { applicationService } from '../../lib/wiring/oauth.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';

export const handler = endpoint(route.rotateAppSecret, { resolveCredential }, async ({ principal, params }) => {
  const rotated = await applicationService.rotateClientSecret(principal, params.app_id!);
  return ok(rotatedOAuthAppView(rotated), { 'Cache-Control': 'no-store' });
});
