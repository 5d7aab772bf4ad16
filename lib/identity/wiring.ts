import { DynamoIdentityStore } from '../store/dynamo-identity-store.js';
import { IdentityService } from './identity-service.js';

/** One store and service per container, shared by every request it serves. */
export const identityService = new IdentityService(new DynamoIdentityStore());

export const resolveCredential = (token: string) => identityService.authenticate(token);
