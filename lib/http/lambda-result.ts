import type { APIGatewayProxyResult } from 'aws-lambda';
import type { Reply } from './reply.js';
import { servedOnLoopback, transportHeaders } from './transport-security.js';

/**
 * The one place every response (success and error envelope alike) is built. Defaults, which a
 * reply may override: `Cache-Control: no-store`, since many responses carry a credential, a
 * secret or a CSRF token (RFC 9111 section 5.2.2.5), `nosniff`, and HSTS outside loopback.
 */
export function toLambdaResult(reply: Reply, requestOrigin?: string): APIGatewayProxyResult {
  return {
    statusCode: reply.statusCode,
    headers: {
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-store',
      ...transportHeaders(servedOnLoopback(requestOrigin)),
      ...reply.headers,
    },
    ...(reply.cookies?.length ? { multiValueHeaders: { 'Set-Cookie': reply.cookies } } : {}),
    body: reply.body,
  };
}
