import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { ok } from '../../lib/http/reply.js';
import { clientCredentialsOf } from '../../lib/oauth/client-authentication.js';
import { oauthParameters } from '../../lib/oauth/oauth-parameters.js';
import { TOKEN_RESPONSE_HEADERS } from '../../lib/oauth/views.js';
import { revocationService } from '../../lib/wiring/oauth.js';

export const handler = endpoint(route.revokeToken, {}, async ({ headers, body }) => {
  const parameters = oauthParameters(body);
  await revocationService.revokeToken(clientCredentialsOf(headers['authorization'], parameters), parameters);
  return ok('revoked', TOKEN_RESPONSE_HEADERS);
});
