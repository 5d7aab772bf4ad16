import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { userView } from '../../lib/identity/views.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { accountsService } from '../../lib/wiring/accounts.js';

export const handler = endpoint(route.disableUser, { resolveCredential }, async ({ principal, params }) => {
  return ok(userView(await accountsService.disableUser(params.user_id!, principal)));
});
