import { config } from '../../lib/config.js';
import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { json } from '../../lib/http/reply.js';
import { clientCredentialsOf } from '../../lib/oauth/client-authentication.js';
import { issuerFor } from '../../lib/oauth/metadata.js';
import { oauthParameters } from '../../lib/oauth/oauth-parameters.js';
import { TOKEN_RESPONSE_HEADERS, tokenResponseView } from '../../lib/oauth/views.js';
import { tokenGrantService } from '../../lib/wiring/oauth.js';

export const handler = endpoint(route.token, {}, async ({ headers, body, origin, basePath }) => {
  const parameters = oauthParameters(body);
  const tokens = await tokenGrantService.issueTokens(
    clientCredentialsOf(headers['authorization'], parameters),
    parameters,
    issuerFor(config.PUBLIC_BASE_URL, origin, basePath),
  );
  return json(200, tokenResponseView(tokens), TOKEN_RESPONSE_HEADERS);
});
