import { CredentialAuthenticator } from '../identity/authentication.js';
import { DynamoCredentialStore } from '../store/dynamo-credential-store.js';

/** One authenticator per container, shared by every request it serves. */
const authenticator = new CredentialAuthenticator(new DynamoCredentialStore());

/**
 * What lib/http/endpoint.ts is handed by every function whose route takes a credential: the
 * credential lookup alone, without the rest of the identity store (lib/wiring/identity.ts).
 */
export const resolveCredential = (token: string) => authenticator.authenticate(token);
