import type { APIGatewayProxyResult } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { ALL_SCOPES } from '../../lib/identity/principal.js';
import type { Caller } from '../../lib/containers/container.js';
import { lambdaContext, proxyEvent } from './lambda-event.js';

/*
 * The release functions (functions/containers/list-releases.ts, rollback.ts) as Lambda runs them,
 * called by a real account with its own token: what the AWS-simulator tests of releases share
 * (test/integration/aws-sim/release-images.test.ts, tag-release-digests.test.ts).
 */

type Handler = (event: never, context: never) => Promise<APIGatewayProxyResult>;

/** A real account, whose token the functions authenticate: the `caller` of useDeploysOnEcsSim. */
export async function realAccount(): Promise<Caller> {
  const { identityService } = await import('../../lib/wiring/identity.js');
  const user = await identityService.createUser({ email: `${randomUUID()}@example.com`, password: 'correct horse battery', role: 'user' });
  return { userId: user.id, role: 'user' };
}

export interface ReleaseFunctions {
  listReleases: Handler;
  rollback: Handler;
  /** A request to one of the functions as API Gateway hands it over, with the owner's token. */
  invoke(handler: Handler, method: string, path: string, pathParameters: Record<string, string>): Promise<{ status: number; body: any }>;
}

/** Loads the two functions and issues the owner a token (call in beforeAll, after the stack is up). */
export async function releaseFunctions(owner: Caller, tokenName: string): Promise<ReleaseFunctions> {
  const { identityService } = await import('../../lib/wiring/identity.js');
  const { handler: listReleases } = (await import('../../functions/containers/list-releases.js')) as unknown as { handler: Handler };
  const { handler: rollback } = (await import('../../functions/containers/rollback.js')) as unknown as { handler: Handler };
  const { token } = await identityService.createPersonalAccessToken(
    {
      userId: owner.userId,
      role: 'user',
      kind: 'session',
      scopes: ALL_SCOPES,
      credentialHash: 'unused',
      expiresAt: '2999-01-01T00:00:00.000Z',
    },
    { name: tokenName, expiresInDays: 1 },
  );
  return {
    listReleases,
    rollback,
    async invoke(handler, method, path, pathParameters) {
      const response = await handler(
        proxyEvent({
          method,
          path,
          pathParameters,
          headers: { Authorization: `Bearer ${token}` },
          ...(method === 'GET' ? { queryStringParameters: { limit: '50' } } : {}),
        }) as never,
        lambdaContext(29_000) as never,
      );
      return { status: response.statusCode, body: JSON.parse(response.body) };
    },
  };
}
