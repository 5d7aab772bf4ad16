import type { APIGatewayProxyEvent } from 'aws-lambda';
import { LOOPBACK_HOSTNAMES } from './cookies.js';

/**
 * The service's own address, from which every absolute URL it prints is built (the OAuth issuer
 * and endpoints, `Link` headers, redirects): PUBLIC_BASE_URL, which the CDK stack sets on every
 * function and the local stack to its own address. Never the request's Host or X-Forwarded-*
 * headers, which the client writes (issue 18). Read when asked, like transport-security.ts does:
 * importing lib/config here would freeze the configuration before the local stack and the tests set it.
 */
export function publicBaseUrlOf(event: APIGatewayProxyEvent): URL {
  const configured = process.env.PUBLIC_BASE_URL;
  if (configured) return new URL(configured);
  // Unset only where a handler is driven directly: API Gateway's record of its own domain and stage.
  const domain = event.requestContext?.domainName ?? 'localhost';
  const scheme = LOOPBACK_HOSTNAMES.has(domain.replace(/:\d+$/, '')) ? 'http' : 'https';
  return new URL(`${scheme}://${domain}${stagePathOf(event)}`);
}

/** API Gateway strips the stage from `path` but not from `requestContext.path`. */
function stagePathOf(event: APIGatewayProxyEvent): string {
  const fullPath = event.requestContext?.path ?? event.path;
  return fullPath.endsWith(event.path) ? fullPath.slice(0, fullPath.length - event.path.length) : '';
}
