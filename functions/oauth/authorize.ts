import { endpoint } from '../../lib/http/endpoint.js';
import { redirect } from '../../lib/http/reply.js';
import { parseAuthorizeParameters } from '../../lib/oauth/oauth-parameters.js';
import { oauthService } from '../../lib/wiring/oauth.js';
import { CONSENT_PATH } from '../../lib/pages/consent-page.js';

export const handler = endpoint('authorize', {}, async ({ query, basePath }) => {
  const requestId = await oauthService.startAuthorization(parseAuthorizeParameters(query));
  return redirect(`${basePath}${CONSENT_PATH}?request=${encodeURIComponent(requestId)}`);
});
