import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Route } from '../../lib/http/routes.js';
import { startLocalServer, type LocalServer } from '../../lib/local/server.js';
import { startTestStack, type TestStack } from '../support/local-stack.js';

const TEN_MIB = 10 * 1024 * 1024;

describe('local server, with the real route table', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(() => stack.close());

  it('answers an unknown route with a 404 envelope', async () => {
    const response = await fetch(`${stack.baseUrl}/no/such/route?x=1`);

    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'No route for GET /no/such/route' } });
  });

  it('does not match a known path with a trailing slash', async () => {
    const response = await fetch(`${stack.baseUrl}/api/v1/sessions/`, { method: 'POST' });

    expect(response.status).toBe(404);
  });

  it('answers a wrong method on a known path with a 405 envelope and an Allow header', async () => {
    const response = await fetch(`${stack.baseUrl}/api/v1/sessions`, { method: 'PUT' });

    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(await response.json()).toEqual({ error: { code: 'METHOD_NOT_ALLOWED', message: expect.any(String) } });
  });

  it('answers a body over 10 MiB with a 413 envelope', async () => {
    const response = await fetch(`${stack.baseUrl}/api/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.alloc(TEN_MIB + 1, 0x61),
    });

    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ error: { code: 'PAYLOAD_TOO_LARGE', message: expect.any(String) } });
  });

  it('answers a chunked body that grows past 10 MiB with a 413 envelope', async () => {
    const { status, body } = await postChunked(`${stack.baseUrl}/api/v1/sessions`, 11, 1024 * 1024);

    expect(status).toBe(413);
    expect(JSON.parse(body)).toEqual({ error: { code: 'PAYLOAD_TOO_LARGE', message: expect.any(String) } });
  });
});

describe('local server, as an API Gateway proxy integration', () => {
  const echoRoute = (id: string, method: Route['method'], path: string): Route => ({
    id,
    method,
    path,
    handler: 'test/support/echo-handler.ts',
    access: 'public',
    body: 'json',
    permissions: { table: 'none' },
    timeoutSeconds: 7,
    answers: { bare: 'McpMessage' },
    summary: 'Echo',
  });
  let server: LocalServer;
  beforeAll(async () => {
    server = await startLocalServer({
      host: '127.0.0.1',
      port: 0,
      routes: [echoRoute('echoItem', 'POST', '/items/{item_id}'), echoRoute('echo', 'GET', '/echo')],
      integrationTimeoutMs: 300,
    });
    // Load the echo handler once (both routes share it): its first import alone took over the
    // 300 ms budget on a loaded 2-core machine (load average 16), and the first test got 504.
    await fetch(`${server.url}/echo`);
  });
  afterAll(() => server.close());

  it('hands the handler a v1 proxy event', async () => {
    const response = await fetch(`${server.url}/items/a%20b?tag=x&tag=y&single=1`, {
      method: 'POST',
      headers: { 'X-Custom': 'yes', 'content-type': 'application/json' },
      body: '{"name":"ü"}',
    });
    const { event, context } = (await response.json()) as { event: Record<string, any>; context: Record<string, any> };

    expect(response.status).toBe(200);
    expect(event).toMatchObject({
      resource: '/items/{item_id}',
      path: '/items/a%20b',
      httpMethod: 'POST',
      pathParameters: { item_id: 'a b' },
      queryStringParameters: { tag: 'y', single: '1' },
      multiValueQueryStringParameters: { tag: ['x', 'y'], single: ['1'] },
      body: '{"name":"ü"}',
      isBase64Encoded: false,
      requestContext: {
        stage: 'local',
        resourcePath: '/items/{item_id}',
        httpMethod: 'POST',
        path: '/items/a%20b',
        requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        requestTimeEpoch: expect.any(Number),
        identity: { sourceIp: '127.0.0.1' },
      },
    });
    expect(event.headers['X-Custom']).toBe('yes');
    expect(event.multiValueHeaders['X-Custom']).toEqual(['yes']);
    expect(event.headers['X-Forwarded-Proto']).toBe('http');
    expect(context.functionName).toBe('echoItem');
    expect(context.remainingMs).toBeGreaterThan(5_000);
    expect(context.remainingMs).toBeLessThanOrEqual(7_000);
  });

  it('sends null query and path parameters and a null body when there are none', async () => {
    const { event } = (await (await fetch(`${server.url}/echo`)).json()) as { event: Record<string, unknown> };

    expect(event).toMatchObject({ queryStringParameters: null, multiValueQueryStringParameters: null, pathParameters: null, body: null });
  });

  it('passes a body that is not UTF-8 as base64', async () => {
    const response = await fetch(`${server.url}/items/1`, { method: 'POST', body: Buffer.from([0xff, 0xfe, 0x00]) });
    const { event } = (await response.json()) as { event: Record<string, unknown> };

    expect(event).toMatchObject({ body: '//4A', isBase64Encoded: true });
  });

  it('writes every Set-Cookie of multiValueHeaders', async () => {
    const response = await fetch(`${server.url}/echo?behave=cookies`);

    expect(response.status).toBe(204);
    expect(response.headers.getSetCookie()).toEqual(['a=1; Path=/', 'b=2; Path=/']);
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('decodes a base64 response body', async () => {
    const response = await fetch(`${server.url}/echo?behave=binary`);

    expect(Buffer.from(await response.arrayBuffer())).toEqual(Buffer.from([0xff, 0x00, 0xfe]));
  });

  it.each(['throw', 'garbage'])('answers 500 INTERNAL_ERROR when the handler does %s', async (behave) => {
    const response = await fetch(`${server.url}/echo?behave=${behave}`);

    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ error: { code: 'INTERNAL_ERROR', message: expect.any(String) } });
  });

  it('answers 504 TIMEOUT when the handler does not answer in time', async () => {
    const response = await fetch(`${server.url}/echo?behave=hang`);

    expect(response.status).toBe(504);
    expect(await response.json()).toEqual({ error: { code: 'TIMEOUT', message: expect.any(String) } });
  });
});

/** Streams `chunks` chunks without a Content-Length, and reads whatever the server answers. */
function postChunked(url: string, chunks: number, chunkSize: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    // The server stops reading and closes the connection; a write error after that is expected.
    request.on('error', (error) => (request.writableEnded ? undefined : reject(error)));
    const chunk = Buffer.alloc(chunkSize, 0x61);
    let sent = 0;
    const writeMore = (): void => {
      while (sent < chunks) {
        sent += 1;
        if (!request.write(chunk)) {
          request.once('drain', writeMore);
          return;
        }
      }
      request.end();
    };
    writeMore();
  });
}
