import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { ApiRequest } from '../api-request.js';

/** The Lambda context, plus the request each middleware refines in turn. */
export type EndpointContext = Context & { api: ApiRequest; pendingWork: Array<Promise<unknown>> };

export type EndpointMiddleware = middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, EndpointContext>;
export type EndpointRequest = middy.Request<APIGatewayProxyEvent, APIGatewayProxyResult, Error, EndpointContext>;
