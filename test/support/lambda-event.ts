import type { APIGatewayProxyEvent, Context, EventBridgeEvent, SQSBatchResponse, SQSEvent } from 'aws-lambda';
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

/** SQS messages as an event source mapping hands them to a function, one record per body. */
export function sqsEvent(...bodies: string[]): SQSEvent {
  return {
    Records: bodies.map((body) => ({
      messageId: randomUUID(),
      receiptHandle: randomUUID(),
      body,
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: String(Date.now()),
        SenderId: 'AIDATEST',
        ApproximateFirstReceiveTimestamp: String(Date.now()),
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:task-events',
      awsRegion: 'us-east-1',
    })),
  };
}

/**
 * Delivers an EventBridge event to the task state function as the queue does (the whole event as
 * the message body), and fails as the invocation's partial batch response says it did.
 */
export async function deliverTaskStateChange(
  handler: (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>,
  event: object,
): Promise<void> {
  const response = await handler(sqsEvent(JSON.stringify(event)), lambdaContext());
  if (response.batchItemFailures.length > 0) throw new Error('The task state function reported the message failed');
}
