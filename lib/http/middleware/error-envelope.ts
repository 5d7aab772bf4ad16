import { HttpError, InternalError } from '../../errors.js';
import { describeError, log } from '../../log.js';
import { json, type Reply } from '../reply.js';
import { toLambdaResult } from '../lambda-result.js';
import type { EndpointMiddleware } from './types.js';

/**
 * The one place where a failure becomes a response. Our own `HttpError`s are answered as
 * they are; anything else is logged with the request id and answered 500 INTERNAL_ERROR,
 * so no stack trace or raw error message ever reaches a client.
 */
export function errorReply(error: unknown, requestId: string): Reply {
  const known = error instanceof HttpError ? error : undefined;
  if (!known) log.error('unhandled error', { requestId, ...describeError(error) });
  const answer = known ?? new InternalError();
  return json(
    answer.statusCode,
    { error: { code: answer.code, message: answer.message } },
    { 'Cache-Control': 'no-store', 'X-Request-Id': requestId, ...answer.headers },
  );
}

/** Registered first so that middy runs its `onError` last, after every other middleware's. */
export function errorEnvelope(): EndpointMiddleware {
  return {
    name: 'errorEnvelope',
    onError: async (request) => {
      const requestId = request.context.awsRequestId ?? 'unknown';
      request.response = toLambdaResult(errorReply(request.error, requestId), request.context.api?.origin);
    },
  };
}
