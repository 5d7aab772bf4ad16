import { endpoint } from '../../lib/http/endpoint.js';
import { ok } from '../../lib/http/reply.js';
import { applicationService } from '../../lib/wiring/oauth.js';
import { resolveCredential } from '../../lib/wiring/identity.js';

export const handler = endpoint('deleteApp', { resolveCredential }, async ({ principal, params }) => {
  await applicationService.deleteApp(principal, params.app_id!);
  return ok('deleted');
});
