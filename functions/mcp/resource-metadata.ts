import { config } from '../../lib/config.js';
import { endpoint } from '../../lib/http/endpoint.js';
import { json } from '../../lib/http/reply.js';
import * as route from '../../lib/http/routes.js';
import { ALL_SCOPES } from '../../lib/identity/principal.js';
import { issuerFor } from '../../lib/oauth/metadata.js';
import { protectedResourceMetadata } from '../../lib/oauth/resources.js';

export const handler = endpoint(route.mcpResourceMetadata, {}, async ({ origin, basePath }) => {
  const issuer = issuerFor(config.PUBLIC_BASE_URL, origin, basePath);
  return json(200, protectedResourceMetadata(issuer, 'mcp', ALL_SCOPES), { 'Cache-Control': 'public, max-age=300' });
});
