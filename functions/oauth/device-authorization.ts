import { config } from '../../lib/config.js';
import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { json } from '../../lib/http/reply.js';
import { clientCredentialsOf } from '../../lib/oauth/client-authentication.js';
import { issuerFor } from '../../lib/oauth/metadata.js';
import { oauthParameters } from '../../lib/oauth/oauth-parameters.js';
import { deviceAuthorizationView, TOKEN_RESPONSE_HEADERS } from '../../lib/oauth/views.js';
import { deviceAuthorizationService } from '../../lib/wiring/oauth.js';

export const handler = endpoint(route.deviceAuthorization, {}, async ({ headers, body, origin, basePath }) => {
  const parameters = oauthParameters(body);
  const issuer = issuerFor(config.PUBLIC_BASE_URL, origin, basePath);
  const started = await deviceAuthorizationService.startDeviceAuthorization(
    clientCredentialsOf(headers['authorization'], parameters),
    parameters,
    issuer,
  );
  return json(200, deviceAuthorizationView(started, issuer), TOKEN_RESPONSE_HEADERS);
});
