import { IdentityService } from '../identity/identity-service.js';
import { DynamoIdentityStore } from '../store/dynamo-identity-store.js';
import { revokeAllGrantsOfUser } from '../store/dynamo-oauth-authorized-apps.js';

/**
 * The identity service of an admin's disable, which also revokes the account's OAuth grants: kept
 * apart from lib/wiring/identity.ts so that only that function bundles the OAuth store.
 */
export const accountsService = new IdentityService(new DynamoIdentityStore(), undefined, undefined, revokeAllGrantsOfUser);
