import { refreshGrace } from '#wiring/refresh-grace-key';
import { IdentityService } from '../identity/identity-service.js';
import { DynamoIdentityStore } from '../store/dynamo-identity-store.js';

/**
 * The identity service of the two sign-in functions (POST /api/v1/sessions and POST /login), with
 * the key that signs device cookies: the service's HMAC key, the one the refresh retry grace
 * derives with (lib/oauth/refresh-grace.ts; each use has its own label). Kept apart from
 * lib/wiring/identity.ts so that only these functions bundle and may read the key.
 */
export const signInService = new IdentityService(new DynamoIdentityStore(), undefined, refreshGrace.key);
