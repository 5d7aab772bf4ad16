import { endpoint } from '../../lib/http/endpoint.js';
import { ok } from '../../lib/http/reply.js';
import { userView } from '../../lib/identity/views.js';
import { identityService, resolveCredential } from '../../lib/wiring/identity.js';

export const handler = endpoint('getMe', { resolveCredential }, async ({ principal }) => {
  return ok(userView(await identityService.getUser(principal.userId)));
});
