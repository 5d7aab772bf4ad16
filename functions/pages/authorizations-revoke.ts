import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { page } from '../../lib/pages/layout.js';
import { revokeAuthorizationForm } from '../../lib/pages/forms.js';
import { revokeFromPage } from '../../lib/pages/authorizations-page.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { authorizedAppService } from '../../lib/wiring/oauth.js';

export const handler = endpoint(
  route.authorizationsPageRevoke,
  { body: revokeAuthorizationForm, resolveCredential, layout: page },
  (request) => revokeFromPage(request, { authorizedAppService }),
);
