import {
  BadRequestError,
  type FieldProblem,
  HttpError,
  InternalError,
  type OAuthErrorCode,
  UnauthorizedError,
  unavailableFrom,
} from '../../errors.js';
import { describeError, log } from '../../log.js';
import { escapeHtml, html, json, type Reply } from '../reply.js';
import { toLambdaResult } from '../lambda-result.js';
import type { Route } from '../routes.js';
import type { EndpointMiddleware } from './types.js';

/**
 * How a failure is written: the service's envelope, RFC 6749 section 5.2's error body, or an
 * HTML page for a person in a browser.
 */
export type ErrorFormat = 'envelope' | 'rfc6749' | 'html';

/**
 * The error a client may see for any failure: our own `HttpError`s as they are; an AWS call that
 * failed transiently past the SDK's retries, 503 SERVICE_BUSY with Retry-After; anything else is
 * logged with the request id and becomes 500 INTERNAL_ERROR, so no stack trace or raw error
 * message ever reaches a client.
 */
export function publicFailure(error: unknown, requestId: string): HttpError {
  if (error instanceof HttpError) return error;
  const unavailable = unavailableFrom(error);
  if (unavailable) {
    log.warn('A dependency did not answer', { requestId, ...describeError(error) });
    return unavailable;
  }
  log.error('unhandled error', { requestId, ...describeError(error) });
  return new InternalError();
}

/**
 * The OAuth code an error stands for at the token and revocation endpoints: the one the
 * domain named, else `invalid_request` for any other input error (a repeated or malformed
 * parameter) and `invalid_client` for any other authentication failure.
 */
function oauthCodeOf(error: HttpError): OAuthErrorCode | undefined {
  const named = (error as { oauthError?: OAuthErrorCode }).oauthError;
  if (named) return named;
  if (error instanceof UnauthorizedError) return 'invalid_client';
  if (error instanceof BadRequestError) return 'invalid_request';
  return undefined;
}

/** RFC 6749 section 5.2: `error_description` is limited to %x20-21 / %x23-5B / %x5D-7E. */
const describable = (message: string): string => message.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, '?');

/**
 * The envelope's body, `{ error: { code, message } }`, with `details` (the fields a 400 names)
 * when there are any; API Gateway's own responses are written from it too.
 */
export const envelopeOf = (error: Pick<HttpError, 'code' | 'message'> & { details?: readonly FieldProblem[] }) => ({
  error: {
    code: error.code,
    message: error.message,
    ...(error.details && error.details.length > 0 ? { details: error.details.map(({ field, message }) => ({ field, message })) } : {}),
  },
});

/** The page a person sees when a page fails: its title as heading, the error's message as an alert. */
export function errorPageMarkup(title: string, message: string, layout: (title: string, content: string) => string): string {
  return layout(title, `<h1>${escapeHtml(title)}</h1>\n<p class="error" role="alert">${escapeHtml(message)}</p>`);
}

export interface HtmlErrorOptions {
  /** The failing page's title (the route's `errorPage`). */
  title: string;
  /** The shell of every page (lib/pages/layout.ts), handed in so that JSON-only bundles carry no markup. */
  layout: (title: string, content: string) => string;
}

/**
 * The one place where a failure becomes a response. In the `rfc6749` format, the errors RFC
 * 6749 defines are written as `{ error, error_description }` with status 400, or 401 for
 * `invalid_client`; the rest (413, 429, 500, 504) keep the envelope. In the `html` format the
 * error's status, headers and message come as a page.
 */
export function errorReply(error: unknown, requestId: string, format: ErrorFormat = 'envelope', page?: HtmlErrorOptions): Reply {
  const answer = publicFailure(error, requestId);
  if (format === 'html' && page) {
    return html(answer.statusCode, errorPageMarkup(page.title, answer.message, page.layout), {
      'X-Request-Id': requestId,
      ...answer.headers,
    });
  }
  const oauthCode = format === 'rfc6749' ? oauthCodeOf(answer) : undefined;
  if (oauthCode) {
    return json(
      oauthCode === 'invalid_client' ? 401 : 400,
      { error: oauthCode, error_description: describable(answer.message) },
      { 'Cache-Control': 'no-store', Pragma: 'no-cache', 'X-Request-Id': requestId, ...answer.headers },
    );
  }
  return json(answer.statusCode, envelopeOf(answer), { 'Cache-Control': 'no-store', 'X-Request-Id': requestId, ...answer.headers });
}

/**
 * RFC 6749's error bodies go to the requests RFC 6749 describes: form-encoded ones, at a route
 * that declares `rfc6749Errors`. A JSON request (the interface spec's format) gets the envelope.
 * A page route's own failures are pages (lib/http/endpoint.ts); what the middleware sees before
 * the page runs (credentials, CSRF, input) keeps the envelope.
 */
export function errorFormatFor(route: Pick<Route, 'rfc6749Errors'> | undefined, contentType: string | undefined): ErrorFormat {
  const isForm = (contentType ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded');
  return route?.rfc6749Errors && isForm ? 'rfc6749' : 'envelope';
}

/** Registered first so that middy runs its `onError` last, after every other middleware's. */
export function errorEnvelope(route?: Route): EndpointMiddleware {
  return {
    name: 'errorEnvelope',
    onError: async (request) => {
      const requestId = request.context.awsRequestId ?? 'unknown';
      const format = errorFormatFor(route, request.context.api?.headers?.['content-type']);
      request.response = toLambdaResult(errorReply(request.error, requestId, format), request.context.api?.origin);
    },
  };
}
