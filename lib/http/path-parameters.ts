import { isUuid } from '../ids.js';
import { isClientIdUrl } from '../oauth/client-id-url.js';

/**
 * What an `{..._id}` path parameter may hold: a UUID, except where the resource is named by an
 * OAuth client_id, which a client metadata document makes an https URL (docs/oauth.md, "Client
 * metadata documents"): an authorized application is revoked by its client_id. Anything else is
 * 404 before a handler runs, as an id that names nothing would be.
 */
const CLIENT_ID_NAMED = new Set(['authorization_id']);

/**
 * The id a path parameter names, or undefined when it cannot name anything (404). A client_id URL
 * arrives decoded once from the local server and, where API Gateway hands path parameters on still
 * percent-encoded (an encoded `/` keeps the segment whole), encoded: that one is decoded here, once.
 */
export function pathIdOf(name: string, value: string): string | undefined {
  if (isUuid(value)) return value;
  if (!CLIENT_ID_NAMED.has(name)) return undefined;
  if (isClientIdUrl(value)) return value;
  const decoded = decodedOnce(value);
  return decoded !== undefined && isClientIdUrl(decoded) ? decoded : undefined;
}

function decodedOnce(value: string): string | undefined {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

/** The parameter's schema in the OpenAPI document. */
export function pathParameterSchema(name: string): { type: 'string'; format?: string; description?: string } {
  if (CLIENT_ID_NAMED.has(name)) {
    return {
      type: 'string',
      description: "the application's client_id: a UUID, or a client metadata document's https URL, percent-encoded",
    };
  }
  return name.endsWith('_id') ? { type: 'string', format: 'uuid' } : { type: 'string' };
}
