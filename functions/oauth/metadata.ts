import { config } from '../../lib/config.js';
import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { json } from '../../lib/http/reply.js';
import { authorizationServerMetadata, issuerFor } from '../../lib/oauth/metadata.js';

export const handler = endpoint(route.authorizationServerMetadata, {}, async ({ origin, basePath }) => {
  const issuer = issuerFor(config.PUBLIC_BASE_URL, origin, basePath);
  return json(200, authorizationServerMetadata(issuer), { 'Cache-Control': 'public, max-age=300' });
});
