import { IdentityService } from '../identity/identity-service.js';
import { DynamoIdentityStore } from '../store/dynamo-identity-store.js';

/** One store and service per container, shared by every request it serves. */
export const identityService = new IdentityService(new DynamoIdentityStore());
