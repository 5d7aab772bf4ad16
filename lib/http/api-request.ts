import type { Principal } from '../identity/principal.js';

/**
 * A request as the endpoint functions see it: already authenticated, decoded and
 * validated, with nothing of API Gateway's event shape left.
 */
export interface ApiRequest<Body = unknown, Query = Record<string, string>> {
  requestId: string;
  method: string;
  /** The request path as called, e.g. /api/v1/containers. */
  path: string;
  /**
   * Scheme and host of the service's public base URL (PUBLIC_BASE_URL), e.g. https://api.example.com;
   * for absolute links. Never taken from the request's headers (lib/http/public-base-url.ts).
   */
  origin: string;
  /** The path of the public base URL: the stage on a stage URL (e.g. /prod), empty on a custom domain or locally. */
  basePath: string;
  params: Record<string, string>;
  query: Query;
  /** Header names lower-cased. */
  headers: Record<string, string>;
  cookies: Record<string, string>;
  body: Body;
  sourceIp: string;
  principal: Principal | undefined;
}

/** An `ApiRequest` of a route whose access level guarantees a principal. */
export type AuthenticatedRequest<Body = unknown, Query = Record<string, string>> = ApiRequest<Body, Query> & {
  principal: Principal;
};
