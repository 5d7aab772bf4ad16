import { endpoint } from '../../lib/http/endpoint.js';
import { showConsent } from '../../lib/pages/consent-page.js';
import { identityService, resolveCredential } from '../../lib/wiring/identity.js';
import { authorizationService } from '../../lib/wiring/oauth.js';

export const handler = endpoint('consentPage', { resolveCredential }, (request) =>
  showConsent(request, { identityService, authorizationService }),
);
