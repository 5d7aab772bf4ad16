import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type * as z from '../zod.js';
import { withInvocationLog } from '../log.js';
import type { Context as LambdaContext } from 'aws-lambda';
import type { ApiRequest, AuthenticatedRequest } from './api-request.js';
import { toLambdaResult } from './lambda-result.js';
import { authenticate, type CredentialResolver } from './middleware/authenticate.js';
import { errorEnvelope, errorReply, type HtmlErrorOptions } from './middleware/error-envelope.js';
import { HttpError, TimeoutError } from '../errors.js';
import { normalizeRequest } from './middleware/normalize-request.js';
import { observeRequest } from './middleware/observe-request.js';
import { parseBody } from './middleware/parse-body.js';
import type { EndpointContext } from './middleware/types.js';
import type { Principal } from '../identity/principal.js';
import { validateInput } from './middleware/validate-input.js';
import type { Reply } from './reply.js';
import type { Route } from './routes.js';

/** Routes that require a credential hand their function a request with a principal. */
export type RequestFor<R extends Route, Body, Query> = R['access'] extends 'public' | 'browser'
  ? ApiRequest<Body, Query>
  : AuthenticatedRequest<Body, Query>;

export interface EndpointOptions<BodySchema extends z.ZodMiniType | undefined, QuerySchema extends z.ZodMiniType | undefined> {
  body?: BodySchema;
  query?: QuerySchema;
  /**
   * How a bearer token or session cookie becomes a principal. Every route but the public ones
   * needs it; the function's module passes the one it wires (lib/wiring/authentication.ts), so a
   * public route's bundle carries no credential store.
   */
  resolveCredential?: CredentialResolver;
  /**
   * A rule on the caller beyond the route's access level, checked at the same step of the order
   * (before the body): the container runtime's rule on whose code it runs (lib/containers/run-policy.ts).
   */
  authorize?: (principal: Principal) => void;
  /**
   * The page shell (lib/pages/layout.ts) for a route with an `errorPage`: the failures its
   * function raises are rendered in it. Handed in so that JSON routes' bundles carry no markup.
   */
  layout?: HtmlErrorOptions['layout'];
}

type Parsed<Schema, Fallback> = Schema extends z.ZodMiniType ? z.infer<Schema> : Fallback;

/** Lambda gives up at its timeout; answer 504 in the envelope a little before that. */
const TIMEOUT_MARGIN_MS = 500;

/**
 * Wraps an endpoint function in the middleware chain every route shares. The order of the
 * `use` calls is the order of checks in docs/api-rules.md.
 */
export function endpoint<
  R extends Route,
  BodySchema extends z.ZodMiniType | undefined = undefined,
  QuerySchema extends z.ZodMiniType | undefined = undefined,
>(
  route: R,
  options: EndpointOptions<BodySchema, QuerySchema>,
  run: (request: RequestFor<R, Parsed<BodySchema, unknown>, Parsed<QuerySchema, Record<string, string>>>) => Promise<Reply>,
) {
  const { resolveCredential } = options;
  if (route.access !== 'public' && !resolveCredential)
    throw new Error(`${route.id} needs a credential resolver (route access ${route.access})`);
  const { errorPage } = route;
  if (errorPage && !options.layout) throw new Error(`${route.id} renders its failures as a page and needs the page layout`);
  const page = errorPage && options.layout ? { title: errorPage, layout: options.layout } : undefined;
  const answer = async (request: EndpointContext['api']): Promise<Reply> => {
    if (!page) return run(request as never);
    try {
      return await run(request as never);
    } catch (error) {
      // A person in a browser reads the page's own failures as a page, not as JSON (the one renderer).
      if (error instanceof HttpError) return errorReply(error, request.requestId, 'html', page);
      throw error;
    }
  };
  const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, EndpointContext>({
    timeoutEarlyInMillis: TIMEOUT_MARGIN_MS,
    timeoutEarlyResponse: () => {
      throw new TimeoutError('The request took too long');
    },
  })
    .use(observeRequest(route))
    .use(errorEnvelope(route))
    .use(normalizeRequest())
    .use(authenticate(route, resolveCredential, options.authorize))
    .use(parseBody(route))
    .use(validateInput({ body: options.body, query: options.query }))
    .handler(async (_event, context) => {
      const reply = await answer(context.api);
      return toLambdaResult({ ...reply, headers: { 'X-Request-Id': context.api.requestId, ...reply.headers } }, context.api.origin);
    });
  // Every line the request logs carries Lambda's and API Gateway's request ids (lib/log.ts).
  const invoke = (event: APIGatewayProxyEvent, context: LambdaContext): Promise<APIGatewayProxyResult> =>
    withInvocationLog(context, { lambdaRequestId: context.awsRequestId, apiRequestId: event.requestContext?.requestId }, () =>
      handler(event, context as EndpointContext),
    );
  // The OpenAPI generator reads the schemas from here, so they are declared only once.
  return Object.assign(invoke, { route, inputSchemas: { body: options.body, query: options.query } });
}
