/**
 * The errors a client may see. Each carries the envelope code and HTTP status; anything
 * else that escapes a handler is answered as 500 INTERNAL_ERROR by the error middleware.
 */
export abstract class HttpError extends Error {
  abstract readonly statusCode: number;
  abstract readonly code: string;
  /** Extra response headers, e.g. `Allow` on 405 or `Retry-After` on 429. */
  readonly headers: Record<string, string> = {};

  /**
   * @param details the fields the request got wrong (a 400 from validation, a taken hostname),
   * so that a client shows each problem beside its field and never parses the message;
   * lib/http/middleware/error-envelope.ts writes them as the envelope's `error.details`.
   */
  constructor(
    message: string,
    readonly details: readonly FieldProblem[] = [],
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** One field a request got wrong: its path in the body or query, dotted (`health_check.path`, `env.FOO`). */
export interface FieldProblem {
  field: string;
  message: string;
}

/** The request is malformed, or fields break a rule (named in `details`). */
export class BadRequestError extends HttpError {
  readonly statusCode = 400;
  readonly code = 'BAD_REQUEST';
}

/**
 * Fields that break a rule the schema cannot state (it depends on other fields, on the stored
 * record, or on where a cursor came from): the message names them as zod's would, and `details` lists them.
 */
export function invalidFields(
  problems: readonly FieldProblem[],
  what: 'request body' | 'query parameters' = 'request body',
): BadRequestError {
  const summary = problems.map((problem) => `${problem.field}: ${problem.message}`).join('; ');
  return new BadRequestError(`Invalid ${what}: ${summary}`, problems);
}

export class UnauthorizedError extends HttpError {
  readonly statusCode = 401;
  readonly code = 'UNAUTHORIZED';
  constructor(message = 'Missing or invalid credentials') {
    super(message);
  }
}

/**
 * The error codes of the token endpoint (RFC 6749 section 5.2) and the revocation endpoint
 * (RFC 7009 section 2.2.1). The domain raises them by name; lib/http/middleware/error-envelope.ts
 * renders them as RFC 6749 bodies to a form-encoded request, and as the envelope otherwise.
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'unsupported_token_type'
  /** RFC 8628 section 3.5: the device code grant's answers while the user has not approved. */
  | 'authorization_pending'
  | 'slow_down'
  | 'access_denied'
  | 'expired_token'
  /** RFC 8707 section 2: a `resource` this server does not serve, or one the authorization was not given for. */
  | 'invalid_target';

/** An error of the OAuth protocol endpoints; in the envelope it is BAD_REQUEST (400). */
export class OAuthRequestError extends BadRequestError {
  constructor(
    readonly oauthError: Exclude<OAuthErrorCode, 'invalid_client'>,
    message: string,
  ) {
    super(message);
  }
}

/**
 * RFC 6749 section 5.2 `invalid_client`: client authentication failed; in the envelope it is
 * UNAUTHORIZED (401). A client that tried HTTP Basic is challenged with `WWW-Authenticate: Basic`.
 */
export class InvalidClientError extends UnauthorizedError {
  readonly oauthError = 'invalid_client';
  constructor(message: string, challengeBasic: boolean) {
    super(message);
    if (challengeBasic) this.headers['WWW-Authenticate'] = 'Basic realm="oauth", charset="UTF-8"';
  }
}

export const invalidRequest = (message: string) => new OAuthRequestError('invalid_request', message);
export const invalidGrant = (message: string) => new OAuthRequestError('invalid_grant', message);
export const invalidScope = (message: string) => new OAuthRequestError('invalid_scope', message);
export const unauthorizedClient = (message: string) => new OAuthRequestError('unauthorized_client', message);
export const unsupportedGrantType = (message: string) => new OAuthRequestError('unsupported_grant_type', message);
export const unsupportedTokenType = (message: string) => new OAuthRequestError('unsupported_token_type', message);
export const invalidTarget = (message: string) => new OAuthRequestError('invalid_target', message);

export class ForbiddenError extends HttpError {
  readonly statusCode = 403;
  readonly code = 'FORBIDDEN';
  constructor(message = 'You are not allowed to do this') {
    super(message);
  }
}

/** The password is right, but an admin reset it: the sign-in must choose a new one (`new_password`). */
export class PasswordChangeRequiredError extends HttpError {
  readonly statusCode = 403;
  readonly code = 'PASSWORD_CHANGE_REQUIRED';
  constructor(message = 'An admin reset this password: sign in again with a new password (new_password)') {
    super(message);
  }
}

/** The password is right, but an admin disabled the account. */
export class AccountDisabledError extends HttpError {
  readonly statusCode = 403;
  readonly code = 'ACCOUNT_DISABLED';
  constructor(message = 'This account is disabled; ask an admin to enable it') {
    super(message);
  }
}

export class CsrfRejectedError extends HttpError {
  readonly statusCode = 403;
  readonly code = 'CSRF_REJECTED';
  constructor(message = 'Session requests that change state need a valid x-csrf-token header') {
    super(message);
  }
}

/** A user's quota (containers, running vCPU) would be passed; nothing was written or started. */
export class QuotaExceededError extends HttpError {
  readonly statusCode = 403;
  readonly code = 'QUOTA_EXCEEDED';
}

/** Past a limit of concurrent work (builds at once): nothing was started; the same request may succeed once one ends. */
export class ConcurrencyQuotaError extends HttpError {
  readonly statusCode = 429;
  readonly code = 'QUOTA_EXCEEDED';
}

export class NotFoundError extends HttpError {
  readonly statusCode = 404;
  readonly code = 'NOT_FOUND';
  constructor(message = 'Not found') {
    super(message);
  }
}

export class MethodNotAllowedError extends HttpError {
  readonly statusCode = 405;
  readonly code = 'METHOD_NOT_ALLOWED';
  constructor(allowed: readonly string[]) {
    super(`Method not allowed; this resource allows ${allowed.join(', ')}`);
    this.headers['Allow'] = allowed.join(', ');
  }
}

/** The client did not send a whole request in time (the local server; API Gateway answers its own). */
export class RequestTimeoutError extends HttpError {
  readonly statusCode = 408;
  readonly code = 'REQUEST_TIMEOUT';
}

export class ConflictError extends HttpError {
  readonly statusCode = 409;
  readonly code = 'CONFLICT';
}

export class PayloadTooLargeError extends HttpError {
  readonly statusCode = 413;
  readonly code = 'PAYLOAD_TOO_LARGE';
  constructor(message = 'The request is too large') {
    super(message);
  }
}

/** The request's header section is larger than the server reads (RFC 6585 section 5). */
export class HeadersTooLargeError extends HttpError {
  readonly statusCode = 431;
  readonly code = 'HEADERS_TOO_LARGE';
}

export class RateLimitedError extends HttpError {
  readonly statusCode = 429;
  readonly code = 'RATE_LIMITED';
  constructor(message = 'Too many requests; slow down', retryAfterSeconds?: number) {
    super(message);
    if (retryAfterSeconds !== undefined) this.headers['Retry-After'] = String(Math.ceil(retryAfterSeconds));
  }
}

/**
 * A service this one depends on (ECS) throttled the request beyond what the SDK's retries could
 * wait out: nothing was done, and the same request may succeed after `Retry-After` seconds.
 * Not the client's excess (that is 429 RATE_LIMITED) and not a fault of ours (500).
 */
export class ServiceBusyError extends HttpError {
  readonly statusCode = 503;
  readonly code = 'SERVICE_BUSY';
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
    this.headers['Retry-After'] = String(Math.ceil(retryAfterSeconds));
  }
}

/** Seconds a client is asked to wait after a dependency failed to answer. */
const UNAVAILABLE_RETRY_AFTER_S = 5;
/** Node's network errors and the SDK's timeouts: the request may never have reached the service. */
const TRANSIENT_NETWORK_ERRORS = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'TimeoutError',
  'RequestTimeout',
]);

/**
 * An AWS call that failed on the way or on the service's side after the SDK's own retries
 * (https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html: timeouts, reset
 * connections and 5xx answers are transient), or a local engine that did not answer (its socket
 * refused or not there): 503 SERVICE_BUSY with Retry-After, as the caller
 * may simply try again, rather than a 500 that says we failed. Undefined for anything else.
 */
export function unavailableFrom(error: unknown): ServiceBusyError | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = 'code' in error ? error.code : undefined;
  const status = '$metadata' in error ? Reflect.get(Object(error.$metadata), 'httpStatusCode') : undefined;
  // A socket file that is not there (a local engine that is not running) is a connection refused, not a missing file of ours.
  const socketMissing = code === 'ENOENT' && 'syscall' in error && error.syscall === 'connect';
  const transient =
    TRANSIENT_NETWORK_ERRORS.has(error.name) ||
    (typeof code === 'string' && TRANSIENT_NETWORK_ERRORS.has(code)) ||
    socketMissing ||
    ('$fault' in error && error.$fault === 'server' && (typeof status !== 'number' || status >= 500));
  return transient
    ? new ServiceBusyError('A service we depend on did not answer; try again shortly', UNAVAILABLE_RETRY_AFTER_S)
    : undefined;
}

/**
 * The container's own code failed (it exited, failed its health check, or its image could not be
 * pulled): the request was carried out and the outcome is the app's, not the service's, so it is
 * no 5xx (which would also set off the operator's 5xx alarm). The message carries `state_reason`.
 */
export class ContainerFailedError extends HttpError {
  readonly statusCode = 409;
  readonly code = 'CONTAINER_FAILED';
}

export class InternalError extends HttpError {
  readonly statusCode = 500;
  readonly code = 'INTERNAL_ERROR';
  constructor(message = 'Internal server error') {
    super(message);
  }
}

export class TimeoutError extends HttpError {
  readonly statusCode = 504;
  readonly code = 'TIMEOUT';
  constructor(message = 'The request timed out') {
    super(message);
  }
}

/** The endpoint exists but the feature is not enabled on this deployment. */
export class NotImplementedError extends HttpError {
  readonly statusCode = 501;
  readonly code = 'NOT_IMPLEMENTED';
}
