import type { APIGatewayProxyEvent, Context, EventBridgeEvent } from 'aws-lambda';
import { randomUUID } from 'node:crypto';

/** A REST API proxy event as API Gateway sends it, for driving handlers without a server. */
export function proxyEvent(overrides: Partial<APIGatewayProxyEvent> & { method?: string } = {}): APIGatewayProxyEvent {
  const { method = 'GET', ...rest } = overrides;
  const path = rest.path ?? '/';
  return {
    httpMethod: method,
    path,
    resource: path,
    headers: {},
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body: null,
    isBase64Encoded: false,
    requestContext: {
      requestId: 'req-test',
      path: `/prod${path}`,
      stage: 'prod',
      identity: { sourceIp: '127.0.0.1' },
    } as APIGatewayProxyEvent['requestContext'],
    ...rest,
  };
}

export function lambdaContext(remainingMs = 10_000): Context {
  return {
    awsRequestId: 'req-test',
    functionName: 'test',
    getRemainingTimeInMillis: () => remainingMs,
    callbackWaitsForEmptyEventLoop: false,
  } as Context;
}

/** An "ECS Task State Change" as EventBridge delivers it, around the task's `detail`. */
export function ecsTaskStateChange<Detail extends { taskArn?: string }>(detail: Detail): EventBridgeEvent<'ECS Task State Change', Detail> {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'ECS Task State Change',
    source: 'aws.ecs',
    account: '123456789012',
    time: new Date().toISOString(),
    region: 'us-east-1',
    resources: detail.taskArn ? [detail.taskArn] : [],
    detail,
  };
}
