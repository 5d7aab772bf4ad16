import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { page } from '../../lib/pages/layout.js';
import { showConsent } from '../../lib/pages/consent-page.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { identityService } from '../../lib/wiring/identity.js';
import { authorizationService } from '../../lib/wiring/oauth.js';

export const handler = endpoint(route.consentPage, { resolveCredential, layout: page }, (request) =>
  showConsent(request, { identityService, authorizationService }),
);
