import { endpoint } from '../../lib/http/endpoint.js';
import { revokeAuthorizationForm } from '../../lib/oauth/schemas.js';
import { revokeFromPage } from '../../lib/pages/authorizations-page.js';
import { resolveCredential } from '../../lib/wiring/identity.js';
import { authorizedAppService } from '../../lib/wiring/oauth.js';

export const handler = endpoint('authorizationsPageRevoke', { body: revokeAuthorizationForm, resolveCredential }, (request) =>
  revokeFromPage(request, { authorizedAppService }),
);
