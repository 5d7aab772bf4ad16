import { ForbiddenError } from '../../lib/errors.js';
import { bearerChallenge } from '../../lib/http/bearer-challenge.js';
import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { answerMcpRequest, scopesMissing } from '../../lib/mcp/mcp-server.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { containerToolServices } from '../../lib/wiring/mcp.js';

export const handler = endpoint(route.mcpServer, { resolveCredential }, async (request) => {
  // A tool call needs its REST twin's scope: short of it, 403 with the scope to ask for (RFC 6750 section 3.1).
  const missing = scopesMissing(request.body, request.principal);
  if (missing.length > 0) {
    const refused = new ForbiddenError(`This token lacks the ${missing.join(' and ')} scope`);
    refused.headers['WWW-Authenticate'] = bearerChallenge(`${request.origin}${request.basePath}`, 'mcp', {
      error: 'insufficient_scope',
      scopes: missing,
    });
    throw refused;
  }
  return answerMcpRequest(request, request.principal, containerToolServices);
});
