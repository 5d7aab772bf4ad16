import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { oauthAppView } from '../../lib/oauth/views.js';
import { applicationService } from '../../lib/wiring/oauth.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';

export const handler = endpoint(route.endAppPreviousSecret, { resolveCredential }, async ({ principal, params }) => {
  const app = await applicationService.endPreviousSecret(principal, params.app_id!);
  return ok(oauthAppView(app));
});
