import { connect } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { useStack } from '../support/local-stack.js';

/**
 * Issue 18 item 7: requests Node's HTTP parser refuses never reach a handler; the local server
 * answers them in the envelope, as API Gateway answers its own failures, and closes the socket.
 */
const stack = useStack();
let port: number;

beforeAll(async () => {
  port = Number(new URL(stack.baseUrl).port);
});

interface RawExchange {
  statusLine: string;
  headers: Record<string, string>;
  body: string;
  /** The server closed the connection after answering. */
  closed: boolean;
}

/** Writes bytes as they are on a raw socket and reads until the server closes it. */
function rawExchange(bytes: string): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close within 10 s; received ${Buffer.concat(chunks).toString('latin1')}`));
    }, 10_000);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const [statusLine = '', ...headerLines] = head.split('\r\n');
      const headers = Object.fromEntries(
        headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      resolve({ statusLine, headers, body, closed: true });
    });
    socket.write(bytes);
  });
}

describe('the local server, for requests its HTTP parser refuses', () => {
  it('answers an oversized header section with 431 in the envelope and closes the connection', async () => {
    const answer = await rawExchange(`GET /api/v1/users/me HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(answer.statusLine).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.headers['connection']).toBe('close');
    expect(JSON.parse(answer.body)).toEqual({ error: { code: 'HEADERS_TOO_LARGE', message: expect.any(String) } });
    expect(answer.closed).toBe(true);
  });

  it('answers a request with both Content-Length and Transfer-Encoding with 400 in the envelope', async () => {
    const answer = await rawExchange(
      'POST /api/v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    );
    expect(answer.statusLine).toBe('HTTP/1.1 400 Bad Request');
    expect(JSON.parse(answer.body)).toEqual({ error: { code: 'BAD_REQUEST', message: expect.any(String) } });
    expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.body));
    expect(answer.closed).toBe(true);
  });

  it('answers a request line that is not HTTP with 400 in the envelope', async () => {
    const answer = await rawExchange('HELLO THERE\r\n\r\n');
    expect(answer.statusLine).toBe('HTTP/1.1 400 Bad Request');
    expect(JSON.parse(answer.body)).toEqual({ error: { code: 'BAD_REQUEST', message: 'Malformed HTTP request' } });
  });

  it('still serves well-formed requests after refusing malformed ones', async () => {
    const response = await fetch(`${stack.baseUrl}/no/such/route`);
    expect(response.status).toBe(404);
  });
});
