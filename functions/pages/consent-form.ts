import { endpoint } from '../../lib/http/endpoint.js';
import { showConsent } from '../../lib/pages/consent-page.js';
import { resolveCredential } from '../../lib/wiring/identity.js';

export const handler = endpoint('consentPage', { resolveCredential }, (request) => showConsent(request));
