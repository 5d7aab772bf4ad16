import { endpoint } from '../../lib/http/endpoint.js';
import { ok } from '../../lib/http/reply.js';
import { oauthService } from '../../lib/oauth/wiring.js';

export const handler = endpoint('deleteApp', {}, async ({ principal, params }) => {
  await oauthService.deleteApp(principal, params.app_id!);
  return ok('deleted');
});
