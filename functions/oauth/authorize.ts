import { config } from '../../lib/config.js';
import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { redirect } from '../../lib/http/reply.js';
import { issuerFor } from '../../lib/oauth/metadata.js';
import { parseAuthorizeParameters } from '../../lib/oauth/oauth-parameters.js';
import { authorizationService } from '../../lib/wiring/oauth.js';
import { CONSENT_PATH } from '../../lib/pages/consent-page.js';

export const handler = endpoint(route.authorize, {}, async ({ query, origin, basePath, sourceIp }) => {
  const issuer = issuerFor(config.PUBLIC_BASE_URL, origin, basePath);
  const requestId = await authorizationService.startAuthorization(parseAuthorizeParameters(query, issuer), sourceIp);
  return redirect(`${basePath}${CONSENT_PATH}?request=${encodeURIComponent(requestId)}`);
});
