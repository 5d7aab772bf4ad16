import { limitsFor, quotaView } from '../../lib/containers/quota.js';
import { endpoint } from '../../lib/http/endpoint.js';
import { ok } from '../../lib/http/reply.js';
import { userView } from '../../lib/identity/views.js';
import { containerStore, quotaLimits } from '../../lib/wiring/containers.js';
import { identityService, resolveCredential } from '../../lib/wiring/identity.js';

export const handler = endpoint('getMe', { resolveCredential }, async ({ principal }) => {
  // In parallel: with the credential's read, two serial round trips.
  const [user, usage] = await Promise.all([identityService.getUser(principal.userId), containerStore.usageOf(principal.userId)]);
  return ok({ ...userView(user), quota: quotaView(usage, limitsFor(principal, quotaLimits)) });
});
