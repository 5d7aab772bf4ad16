import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { rotateSecretBody } from '../../lib/oauth/schemas.js';
import { rotatedOAuthAppView } from '../../lib/oauth/views.js';
import { applicationService } from '../../lib/wiring/oauth.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';

export const handler = endpoint(
  route.rotateAppSecret,
  { body: rotateSecretBody, resolveCredential },
  async ({ principal, params, body }) => {
    const rotated = await applicationService.rotateClientSecret(principal, params.app_id!, body.previous_secret_ttl_seconds);
    return ok(rotatedOAuthAppView(rotated), { 'Cache-Control': 'no-store' });
  },
);
