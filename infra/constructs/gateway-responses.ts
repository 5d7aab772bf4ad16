import { HSTS_VALUE } from '../../lib/http/reply.js';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';

/** `$context.error.messageString` is API Gateway's own message, already a quoted JSON string. */
const GATEWAY_MESSAGE = '$context.error.messageString';

interface EnvelopeResponse {
  type: apigateway.ResponseType;
  statusCode: string;
  code: string;
  /** A JSON string literal, or GATEWAY_MESSAGE. */
  message: string;
}

const fixed = (message: string): string => JSON.stringify(message);

/**
 * Responses API Gateway produces itself, rewritten to the service's error envelope
 * (product decisions, section 1).
 */
export const envelopeGatewayResponses: readonly EnvelopeResponse[] = [
  // An unknown path on a REST API is reported as a missing (SigV4) authentication token.
  {
    type: apigateway.ResponseType.MISSING_AUTHENTICATION_TOKEN,
    statusCode: '404',
    code: 'NOT_FOUND',
    message: fixed('No resource matches this path'),
  },
  // No method uses IAM authorization, so a signature is only examined on unmatched paths
  // that carry an Authorization header.
  {
    type: apigateway.ResponseType.INVALID_SIGNATURE,
    statusCode: '404',
    code: 'NOT_FOUND',
    message: fixed('No resource matches this path'),
  },
  { type: apigateway.ResponseType.RESOURCE_NOT_FOUND, statusCode: '404', code: 'NOT_FOUND', message: fixed('Not found') },
  { type: apigateway.ResponseType.THROTTLED, statusCode: '429', code: 'RATE_LIMITED', message: fixed('Too many requests; slow down') },
  { type: apigateway.ResponseType.QUOTA_EXCEEDED, statusCode: '429', code: 'RATE_LIMITED', message: fixed('Too many requests; slow down') },
  // WAF blocks come only from the rate-based rule (the managed rules only count).
  { type: apigateway.ResponseType.WAF_FILTERED, statusCode: '429', code: 'RATE_LIMITED', message: fixed('Too many requests; slow down') },
  {
    type: apigateway.ResponseType.REQUEST_TOO_LARGE,
    statusCode: '413',
    code: 'PAYLOAD_TOO_LARGE',
    message: fixed('The request is too large'),
  },
  { type: apigateway.ResponseType.INTEGRATION_TIMEOUT, statusCode: '504', code: 'TIMEOUT', message: fixed('The request timed out') },
  { type: apigateway.ResponseType.INTEGRATION_FAILURE, statusCode: '500', code: 'INTERNAL_ERROR', message: fixed('Internal server error') },
  { type: apigateway.ResponseType.ACCESS_DENIED, statusCode: '403', code: 'FORBIDDEN', message: fixed('You are not allowed to do this') },
  { type: apigateway.ResponseType.UNSUPPORTED_MEDIA_TYPE, statusCode: '400', code: 'BAD_REQUEST', message: GATEWAY_MESSAGE },
  { type: apigateway.ResponseType.BAD_REQUEST_BODY, statusCode: '400', code: 'BAD_REQUEST', message: GATEWAY_MESSAGE },
  { type: apigateway.ResponseType.BAD_REQUEST_PARAMETERS, statusCode: '400', code: 'BAD_REQUEST', message: GATEWAY_MESSAGE },
  { type: apigateway.ResponseType.DEFAULT_4XX, statusCode: '400', code: 'BAD_REQUEST', message: GATEWAY_MESSAGE },
  { type: apigateway.ResponseType.DEFAULT_5XX, statusCode: '500', code: 'INTERNAL_ERROR', message: fixed('Internal server error') },
];

export function envelopeBody(code: string, message: string): string {
  return `{"error":{"code":"${code}","message":${message}}}`;
}

export function addEnvelopeGatewayResponses(api: apigateway.RestApi): void {
  for (const response of envelopeGatewayResponses) {
    api.addGatewayResponse(response.type.responseType, {
      type: response.type,
      statusCode: response.statusCode,
      // The same defaults as every Lambda response (lib/http/lambda-result.ts): never cached, HSTS on AWS.
      responseHeaders: {
        'Content-Type': "'application/json'",
        'Cache-Control': "'no-store'",
        'Strict-Transport-Security': `'${HSTS_VALUE}'`,
      },
      templates: { 'application/json': envelopeBody(response.code, response.message) },
    });
  }
}
