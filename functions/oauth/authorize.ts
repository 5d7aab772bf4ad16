import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { redirect } from '../../lib/http/reply.js';
import { parseAuthorizeParameters } from '../../lib/oauth/oauth-parameters.js';
import { authorizationService } from '../../lib/wiring/oauth.js';
import { CONSENT_PATH } from '../../lib/pages/consent-page.js';

export const handler = endpoint(route.authorize, {}, async ({ query, basePath, sourceIp }) => {
  const requestId = await authorizationService.startAuthorization(parseAuthorizeParameters(query), sourceIp);
  return redirect(`${basePath}${CONSENT_PATH}?request=${encodeURIComponent(requestId)}`);
});
