import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorEnvelope, signedInUser, type SignedInUser } from '../support/api-client.js';
import { startTestStack, type TestStack } from '../support/local-stack.js';

/**
 * Issue 18 item 6: failures lock an email only for the address they come from; from every address
 * together they only slow it down. Linux routes all of 127.0.0.0/8 to loopback, so each test
 * client binds its own 127.0.0.x, and the local server hands that address to the handler as API
 * Gateway hands over `requestContext.identity.sourceIp`.
 */
let stack: TestStack;
let port: number;

beforeAll(async () => {
  stack = await startTestStack();
  port = Number(new URL(stack.baseUrl).port);
});

afterAll(async () => {
  await stack?.close();
});

interface SignInResponse {
  status: number;
  retryAfter: string | undefined;
  body: { error?: { code: string; message: string } };
}

function signInFrom(address: string, email: string, password: string): Promise<SignInResponse> {
  const body = JSON.stringify({ email, password });
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: '127.0.0.1',
        port,
        localAddress: address,
        method: 'POST',
        path: '/api/v1/sessions',
        // A forwarding header the client writes must not change whose address counts.
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.9' },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            retryAfter: response.headers['retry-after'],
            body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
          }),
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

const ADDRESS_A = '127.0.0.2';
const ADDRESS_B = '127.0.0.3';

describe('sign-in throttling', () => {
  let admin: SignedInUser;

  beforeAll(async () => {
    admin = await signedInUser(stack.baseUrl, 'admin');
  });

  it('lets the admin sign in from one address while someone hammers the admin’s email from another, who gets 429', async () => {
    // Act: eight wrong passwords from B, one after the other.
    const hammering: SignInResponse[] = [];
    for (let attempt = 0; attempt < 8; attempt += 1) hammering.push(await signInFrom(ADDRESS_B, admin.email, 'wrong password'));
    const adminFromA = await signInFrom(ADDRESS_A, admin.email, admin.password);
    const rightPasswordFromB = await signInFrom(ADDRESS_B, admin.email, admin.password);
    // Assess: B is locked out after five failures, for 15 minutes, even with the right password; A is not.
    expect(hammering.map((response) => response.status)).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    expect(hammering[5]!.body).toEqual(errorEnvelope('RATE_LIMITED'));
    expect(Number(hammering[5]!.retryAfter)).toBeGreaterThan(14 * 60);
    expect(adminFromA.status).toBe(200);
    expect(rightPasswordFromB.status).toBe(429);
  }, 120_000);

  it('only slows an email down when failures come from many addresses: a short Retry-After, then the right password works', async () => {
    // Prepare: ten failures spread over three addresses, none of which reaches its own lock.
    const user = await signedInUser(stack.baseUrl);
    const spread = [
      '127.0.0.4',
      '127.0.0.4',
      '127.0.0.4',
      '127.0.0.4',
      '127.0.0.5',
      '127.0.0.5',
      '127.0.0.5',
      '127.0.0.5',
      '127.0.0.6',
      '127.0.0.6',
    ];
    for (const address of spread) expect((await signInFrom(address, user.email, 'wrong password')).status).toBe(401);
    // Act: the right person, just after, is asked to wait briefly, and then gets in.
    const slowed = await signInFrom(ADDRESS_A, user.email, user.password);
    await new Promise((resolve) => setTimeout(resolve, Number(slowed.retryAfter) * 1000));
    const afterWaiting = await signInFrom(ADDRESS_A, user.email, user.password);
    // Assess
    expect(slowed).toMatchObject({ status: 429, body: errorEnvelope('RATE_LIMITED') });
    expect(Number(slowed.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(slowed.retryAfter)).toBeLessThanOrEqual(60);
    expect(afterWaiting.status).toBe(200);
    // Scrypt makes each sign-in take a while on a busy machine.
  }, 120_000);
});
