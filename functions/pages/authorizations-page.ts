import { endpoint } from '../../lib/http/endpoint.js';
import { showAuthorizations } from '../../lib/pages/authorizations-page.js';
import { resolveCredential } from '../../lib/wiring/identity.js';
import { authorizedAppService } from '../../lib/wiring/oauth.js';

export const handler = endpoint('authorizationsPage', { resolveCredential }, (request) =>
  showAuthorizations(request, { authorizedAppService }),
);
