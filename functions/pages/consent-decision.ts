import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { page } from '../../lib/pages/layout.js';
import { consentDecisionBody } from '../../lib/pages/forms.js';
import { answerConsent } from '../../lib/pages/consent-page.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { authorizationService } from '../../lib/wiring/oauth.js';

export const handler = endpoint(route.consentDecision, { body: consentDecisionBody, resolveCredential, layout: page }, (request) =>
  answerConsent(request, { authorizationService }),
);
