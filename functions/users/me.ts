import { endpoint } from '../../lib/http/endpoint.js';
import { ok } from '../../lib/http/reply.js';
import { userView } from '../../lib/identity/views.js';
import { identityService } from '../../lib/identity/wiring.js';

export const handler = endpoint('getMe', {}, async ({ principal }) => {
  return ok(userView(await identityService.getUser(principal.userId)));
});
