import { OAuthService } from '../oauth/oauth-service.js';
import { DynamoOAuthStore } from '../store/dynamo-oauth-store.js';

/** One store and service per container, shared by every request it serves. */
export const oauthStore = new DynamoOAuthStore();
export const oauthService = new OAuthService(oauthStore);
