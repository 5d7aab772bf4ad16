import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { json } from '../../lib/http/reply.js';
import { clientRegistrationBody } from '../../lib/oauth/schemas.js';
import { clientRegistrationView, TOKEN_RESPONSE_HEADERS } from '../../lib/oauth/views.js';
import { clientRegistrationService } from '../../lib/wiring/oauth.js';

export const handler = endpoint(route.registerClient, { body: clientRegistrationBody }, async ({ body, sourceIp }) => {
  const registered = await clientRegistrationService.register(
    { clientName: body.client_name, redirectUris: body.redirect_uris, tokenEndpointAuthMethod: body.token_endpoint_auth_method },
    sourceIp,
  );
  // RFC 7591 section 3.2.1: 201 Created; the secret in it must not be cached.
  return json(201, clientRegistrationView(registered), TOKEN_RESPONSE_HEADERS);
});
