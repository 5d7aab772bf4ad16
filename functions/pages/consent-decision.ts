import { endpoint } from '../../lib/http/endpoint.js';
import { consentDecisionBody } from '../../lib/oauth/schemas.js';
import { answerConsent } from '../../lib/pages/consent-page.js';
import { resolveCredential } from '../../lib/wiring/identity.js';
import { authorizationService } from '../../lib/wiring/oauth.js';

export const handler = endpoint('consentDecision', { body: consentDecisionBody, resolveCredential }, (request) =>
  answerConsent(request, { authorizationService }),
);
