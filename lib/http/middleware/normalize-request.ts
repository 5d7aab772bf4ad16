import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { ApiRequest } from '../api-request.js';
import { parseCookies } from '../cookies.js';
import { describeError, log } from '../../log.js';
import { publicBaseUrlOf } from '../public-base-url.js';
import type { EndpointMiddleware, EndpointRequest } from './types.js';

function lowerCaseHeaders(event: APIGatewayProxyEvent): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (value !== undefined) headers[name.toLowerCase()] = value;
  }
  return headers;
}

export function toApiRequest(event: APIGatewayProxyEvent, requestId: string): ApiRequest<string | undefined> {
  const headers = lowerCaseHeaders(event);
  const publicBaseUrl = publicBaseUrlOf(event);
  const rawBody =
    event.body === null || event.body === undefined
      ? undefined
      : event.isBase64Encoded
        ? Buffer.from(event.body, 'base64').toString('utf8')
        : event.body;
  const query: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.queryStringParameters ?? {})) {
    if (value !== undefined) query[name] = value;
  }
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.pathParameters ?? {})) {
    if (value !== undefined) params[name] = value;
  }
  return {
    requestId,
    method: event.httpMethod,
    path: event.path,
    origin: publicBaseUrl.origin,
    basePath: publicBaseUrl.pathname.replace(/\/+$/, ''),
    params,
    query,
    headers,
    cookies: parseCookies(headers['cookie']),
    body: rawBody,
    sourceIp: event.requestContext?.identity?.sourceIp ?? '',
    principal: undefined,
  };
}

async function settle(request: EndpointRequest): Promise<void> {
  const outcomes = await Promise.allSettled(request.context.pendingWork ?? []);
  for (const outcome of outcomes) {
    if (outcome.status === 'rejected') {
      log.warn('background work failed', { requestId: request.context.awsRequestId, ...describeError(outcome.reason) });
    }
  }
}

/**
 * Turns the API Gateway event into the `ApiRequest` the later middlewares refine, and waits
 * for the request's background work before the response leaves.
 */
export function normalizeRequest(): EndpointMiddleware {
  return {
    name: 'normalizeRequest',
    before: async (request) => {
      request.context.api = toApiRequest(request.event, request.context.awsRequestId);
      request.context.pendingWork = [];
    },
    // Work started for the request (bookkeeping writes) must finish before Lambda freezes.
    after: (request) => settle(request),
    onError: (request) => settle(request),
  };
}
