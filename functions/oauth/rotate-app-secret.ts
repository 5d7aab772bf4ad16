import { endpoint } from '../../lib/http/endpoint.js';
import { ok } from '../../lib/http/reply.js';
import { rotatedOAuthAppView } from '../../lib/oauth/views.js';
import { oauthService } from '../../lib/oauth/wiring.js';

export const handler = endpoint('rotateAppSecret', {}, async ({ principal, params }) => {
  const rotated = await oauthService.rotateClientSecret(principal, params.app_id!);
  return ok(rotatedOAuthAppView(rotated), { 'Cache-Control': 'no-store' });
});
