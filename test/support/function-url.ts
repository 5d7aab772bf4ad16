import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Context, LambdaFunctionURLEvent, LambdaFunctionURLResult } from 'aws-lambda';

/**
 * A Lambda function URL in front of a handler, over real HTTP: each request becomes a payload
 * format 2.0 event as the URL's front end builds it (lower-case headers, repeated ones joined with
 * commas, cookies apart, the body base64; https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html),
 * and the handler's result the HTTP answer (Set-Cookie from `cookies`, a base64 body decoded).
 * `timeoutMs` is the function's timeout, which its context counts down.
 */
export async function serveFunctionUrl(
  handler: (event: LambdaFunctionURLEvent, context: Context) => Promise<LambdaFunctionURLResult>,
  timeoutMs: number,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    void (async () => {
      const event = await eventOf(request);
      const deadline = Date.now() + timeoutMs;
      const context = {
        awsRequestId: randomUUID(),
        functionName: 'wake',
        functionVersion: '$LATEST',
        invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:wake',
        memoryLimitInMB: '256',
        logGroupName: 'functions',
        logStreamName: 'wake',
        callbackWaitsForEmptyEventLoop: true,
        getRemainingTimeInMillis: () => deadline - Date.now(),
      } as unknown as Context;
      const result = await handler(event, context);
      if (typeof result === 'string') {
        response.writeHead(200, { 'content-type': 'application/json' }).end(result);
        return;
      }
      const headers: Record<string, string | string[]> = { ...(result.headers as Record<string, string>) };
      if (result.cookies?.length) headers['set-cookie'] = result.cookies;
      response.writeHead(result.statusCode ?? 200, headers);
      response.end(result.body === undefined ? undefined : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8'));
    })().catch((error: unknown) => {
      response.writeHead(502, { 'content-type': 'text/plain' }).end(`function failed: ${String(error)}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function eventOf(request: IncomingMessage): Promise<LambdaFunctionURLEvent> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const url = new URL(request.url ?? '/', 'http://function-url');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || name === 'cookie') continue;
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const cookies = request.headers.cookie?.split(/;\s*/).filter(Boolean);
  const now = Date.now();
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    ...(cookies?.length ? { cookies } : {}),
    ...(body.length ? { body: body.toString('base64'), isBase64Encoded: true } : { isBase64Encoded: false }),
    requestContext: {
      accountId: 'anonymous',
      apiId: 'wake',
      domainName: `${request.headers.host ?? ''}`,
      domainPrefix: 'wake',
      http: {
        method: request.method ?? 'GET',
        path: url.pathname,
        protocol: 'HTTP/1.1',
        sourceIp: (request.socket.remoteAddress ?? '').replace(/^::ffff:/, ''),
        userAgent: request.headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: new Date(now).toISOString(),
      timeEpoch: now,
    },
  } as LambdaFunctionURLEvent;
}
