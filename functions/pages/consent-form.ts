import { endpoint } from '../../lib/http/endpoint.js';
import { showConsent } from '../../lib/pages/consent-page.js';

export const handler = endpoint('consentPage', {}, (request) => showConsent(request));
