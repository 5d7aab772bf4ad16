import { HSTS_VALUE } from '../../lib/http/reply.js';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import {
  BadRequestError,
  ForbiddenError,
  type HttpError,
  InternalError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitedError,
  TimeoutError,
} from '../../lib/errors.js';
import { envelopeOf } from '../../lib/http/middleware/error-envelope.js';

/** `$context.error.messageString` is API Gateway's own message, already a quoted JSON string. */
const GATEWAY_MESSAGE = '$context.error.messageString';

interface EnvelopeResponse {
  type: apigateway.ResponseType;
  /** The error it stands for: its status, code and (unless API Gateway's own message is kept) message. */
  error: HttpError;
  /** Keep API Gateway's message, which says what was wrong with the request. */
  gatewayMessage?: boolean;
}

const NO_RESOURCE = 'No resource matches this path';

/**
 * Responses API Gateway produces itself, rewritten to the service's error envelope
 * (product decisions, section 1), from the same error classes and messages the functions answer with.
 */
export const envelopeGatewayResponses: readonly EnvelopeResponse[] = [
  // An unknown path on a REST API is reported as a missing (SigV4) authentication token.
  { type: apigateway.ResponseType.MISSING_AUTHENTICATION_TOKEN, error: new NotFoundError(NO_RESOURCE) },
  // No method uses IAM authorization, so a signature is only examined on unmatched paths
  // that carry an Authorization header.
  { type: apigateway.ResponseType.INVALID_SIGNATURE, error: new NotFoundError(NO_RESOURCE) },
  { type: apigateway.ResponseType.RESOURCE_NOT_FOUND, error: new NotFoundError() },
  { type: apigateway.ResponseType.THROTTLED, error: new RateLimitedError() },
  { type: apigateway.ResponseType.QUOTA_EXCEEDED, error: new RateLimitedError() },
  // WAF blocks come only from the rate-based rule (the managed rules only count).
  { type: apigateway.ResponseType.WAF_FILTERED, error: new RateLimitedError() },
  { type: apigateway.ResponseType.REQUEST_TOO_LARGE, error: new PayloadTooLargeError() },
  { type: apigateway.ResponseType.INTEGRATION_TIMEOUT, error: new TimeoutError() },
  { type: apigateway.ResponseType.INTEGRATION_FAILURE, error: new InternalError() },
  { type: apigateway.ResponseType.ACCESS_DENIED, error: new ForbiddenError() },
  { type: apigateway.ResponseType.UNSUPPORTED_MEDIA_TYPE, error: new BadRequestError(''), gatewayMessage: true },
  { type: apigateway.ResponseType.BAD_REQUEST_BODY, error: new BadRequestError(''), gatewayMessage: true },
  { type: apigateway.ResponseType.BAD_REQUEST_PARAMETERS, error: new BadRequestError(''), gatewayMessage: true },
  { type: apigateway.ResponseType.DEFAULT_4XX, error: new BadRequestError(''), gatewayMessage: true },
  { type: apigateway.ResponseType.DEFAULT_5XX, error: new InternalError() },
];

const MESSAGE_PLACEHOLDER = '"__gateway_message__"';

/**
 * The envelope as a mapping template, written by the functions' renderer (envelopeOf): with
 * `gatewayMessage`, API Gateway's own message (already a quoted JSON string) stands in for ours.
 */
export function envelopeBody(error: HttpError, gatewayMessage = false): string {
  const body = JSON.stringify(envelopeOf(gatewayMessage ? { code: error.code, message: '__gateway_message__' } : error));
  return gatewayMessage ? body.replace(MESSAGE_PLACEHOLDER, GATEWAY_MESSAGE) : body;
}

export function addEnvelopeGatewayResponses(api: apigateway.RestApi): void {
  for (const response of envelopeGatewayResponses) {
    api.addGatewayResponse(response.type.responseType, {
      type: response.type,
      statusCode: String(response.error.statusCode),
      // The same defaults as every Lambda response (lib/http/lambda-result.ts): never cached, HSTS on AWS.
      responseHeaders: {
        'Content-Type': "'application/json'",
        'Cache-Control': "'no-store'",
        'Strict-Transport-Security': `'${HSTS_VALUE}'`,
      },
      templates: { 'application/json': envelopeBody(response.error, response.gatewayMessage) },
    });
  }
}
