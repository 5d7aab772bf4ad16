import { endpoint } from '../../lib/http/endpoint.js';
import { ok } from '../../lib/http/reply.js';
import { rotatedOAuthAppView } from '../../lib/oauth/views.js';
import { applicationService } from '../../lib/wiring/oauth.js';
import { resolveCredential } from '../../lib/wiring/identity.js';

export const handler = endpoint('rotateAppSecret', { resolveCredential }, async ({ principal, params }) => {
  const rotated = await applicationService.rotateClientSecret(principal, params.app_id!);
  return ok(rotatedOAuthAppView(rotated), { 'Cache-Control': 'no-store' });
});
