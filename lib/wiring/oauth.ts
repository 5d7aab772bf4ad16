import { refreshGrace } from '#wiring/refresh-grace-key';
import { ApplicationService } from '../oauth/applications.js';
import { AuthorizationService } from '../oauth/authorization.js';
import { AuthorizedAppService } from '../oauth/authorized-apps.js';
import { ClientMetadataResolver } from '../oauth/client-metadata.js';
import { fetchClientMetadataDocument } from '../oauth/client-metadata-fetch.js';
import { ClientRegistrationService } from '../oauth/client-registration.js';
import { config } from '../config.js';
import { DeviceAuthorizationService } from '../oauth/device-authorization.js';
import { RevocationService } from '../oauth/revocation.js';
import { TokenGrantService } from '../oauth/token-grants.js';
import { DynamoApplicationStore } from '../store/dynamo-oauth-applications.js';
import { DynamoAuthorizationStore } from '../store/dynamo-oauth-authorization.js';
import { DynamoAuthorizedAppStore } from '../store/dynamo-oauth-authorized-apps.js';
import { DynamoClientRegistrationStore } from '../store/dynamo-oauth-client-registration.js';
import { DynamoDeviceAuthorizationStore } from '../store/dynamo-oauth-device-codes.js';
import { DynamoDeviceCodeGrantStore } from '../store/dynamo-oauth-device-code-grant.js';
import { DynamoRevocationStore } from '../store/dynamo-oauth-revocation.js';
import { DynamoTokenGrantStore } from '../store/dynamo-oauth-token-grants.js';

/**
 * One store and service per concern and per container, shared by every request it serves.
 * Each is marked pure, so a function's bundle keeps only those its handler imports
 * (test/infra/bundle-contents.test.ts).
 */
export const applicationStore = /* @__PURE__ */ new DynamoApplicationStore();
export const authorizationStore = /* @__PURE__ */ new DynamoAuthorizationStore();
export const tokenGrantStore = /* @__PURE__ */ new DynamoTokenGrantStore();
export const revocationStore = /* @__PURE__ */ new DynamoRevocationStore();
export const authorizedAppStore = /* @__PURE__ */ new DynamoAuthorizedAppStore();

export const applicationService = /* @__PURE__ */ new ApplicationService(applicationStore);
/**
 * Client metadata documents: fetched within 5 s, at most 5 KiB (lib/oauth/client-metadata-fetch.ts).
 * Built in a function, so the call marked pure has no arguments that read the configuration, and
 * bundles that do not authorize leave it out.
 */
function clientMetadataResolverOf(): ClientMetadataResolver {
  const allowedHosts = new Set(config.OAUTH_CLIENT_METADATA_ALLOWED_HOSTS.split(',').map((entry) => entry.trim()));
  return new ClientMetadataResolver(
    (url) => fetchClientMetadataDocument(url, { allowedHosts, timeoutMs: 5000, maxBytes: 5 * 1024 }),
    authorizationStore,
    { allowInsecureLoopback: config.ALLOW_INSECURE_REDIRECT_URIS },
  );
}
const clientMetadataResolver = /* @__PURE__ */ clientMetadataResolverOf();
export const authorizationService = /* @__PURE__ */ new AuthorizationService(authorizationStore, undefined, clientMetadataResolver);
export const deviceAuthorizationStore = /* @__PURE__ */ new DynamoDeviceAuthorizationStore();
export const deviceAuthorizationService = /* @__PURE__ */ new DeviceAuthorizationService(deviceAuthorizationStore);
export const deviceCodeGrantStore = /* @__PURE__ */ new DynamoDeviceCodeGrantStore();
export const tokenGrantService = /* @__PURE__ */ new TokenGrantService({
  tokenGrants: tokenGrantStore,
  deviceCodes: deviceCodeGrantStore,
  grace: refreshGrace,
});
export const revocationService = /* @__PURE__ */ new RevocationService(revocationStore);
export const authorizedAppService = /* @__PURE__ */ new AuthorizedAppService(authorizedAppStore);
export const clientRegistrationStore = /* @__PURE__ */ new DynamoClientRegistrationStore();
export const clientRegistrationService = /* @__PURE__ */ new ClientRegistrationService(clientRegistrationStore);
