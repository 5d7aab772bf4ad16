/**
 * The errors a client may see. Each carries the envelope code and HTTP status; anything
 * else that escapes a handler is answered as 500 INTERNAL_ERROR by the error middleware.
 */
export abstract class HttpError extends Error {
  abstract readonly statusCode: number;
  abstract readonly code: string;
  /** Extra response headers, e.g. `Allow` on 405 or `Retry-After` on 429. */
  readonly headers: Record<string, string> = {};

  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

export class BadRequestError extends HttpError {
  readonly statusCode = 400;
  readonly code = 'BAD_REQUEST';
}

export class UnauthorizedError extends HttpError {
  readonly statusCode = 401;
  readonly code = 'UNAUTHORIZED';
  constructor(message = 'Missing or invalid credentials') {
    super(message);
  }
}

export class ForbiddenError extends HttpError {
  readonly statusCode = 403;
  readonly code = 'FORBIDDEN';
  constructor(message = 'You are not allowed to do this') {
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

export class ConflictError extends HttpError {
  readonly statusCode = 409;
  readonly code = 'CONFLICT';
}

export class PayloadTooLargeError extends HttpError {
  readonly statusCode = 413;
  readonly code = 'PAYLOAD_TOO_LARGE';
}

export class RateLimitedError extends HttpError {
  readonly statusCode = 429;
  readonly code = 'RATE_LIMITED';
  constructor(message: string, retryAfterSeconds?: number) {
    super(message);
    if (retryAfterSeconds !== undefined) this.headers['Retry-After'] = String(Math.ceil(retryAfterSeconds));
  }
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
}

/** The endpoint exists but the feature is not enabled on this deployment. */
export class NotImplementedError extends HttpError {
  readonly statusCode = 501;
  readonly code = 'NOT_IMPLEMENTED';
}
