import { limitsFor, quotaView } from '../../lib/containers/quota.js';
import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { userView } from '../../lib/identity/views.js';
import { containerStore, quotaLimits } from '../../lib/wiring/containers.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { identityService } from '../../lib/wiring/identity.js';

export const handler = endpoint(route.getMe, { resolveCredential }, async ({ principal }) => {
  // In parallel: with the credential's read, two serial round trips.
  const [user, usage] = await Promise.all([identityService.getUser(principal.userId), containerStore.usageOf(principal.userId)]);
  return ok({ ...userView(user), quota: quotaView(usage, limitsFor(principal, quotaLimits)) });
});
