import { endpoint } from '../../lib/http/endpoint.js';
import { consentDecisionBody } from '../../lib/oauth/schemas.js';
import { answerConsent } from '../../lib/pages/consent-page.js';

export const handler = endpoint('consentDecision', { body: consentDecisionBody }, (request) => answerConsent(request));
