import { request } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { errorEnvelope, signedInUser, type SignedInUser } from '../support/api-client.js';
import { useStack } from '../support/local-stack.js';

/**
 * Issue 18 item 6: failures lock an email only for the address they come from; from every address
 * together they only slow it down. Linux routes all of 127.0.0.0/8 to loopback, so each test
 * client binds its own 127.0.0.x, and the local server hands that address to the handler as API
 * Gateway hands over `requestContext.identity.sourceIp`.
 */
const stack = useStack();
let port: number;

beforeAll(async () => {
  port = Number(new URL(stack.baseUrl).port);
});

interface SignInResponse {
  status: number;
  retryAfter: string | undefined;
  /** Each Set-Cookie as `name=value`. */
  cookies: string[];
  location: string | undefined;
  text: string;
  body: { error?: { code: string; message: string } };
}

/** The second an attacker's failed try holds the email's next slot for. */
const HELD_SLOT_MS = 1_000;

/**
 * One more wrong password from `attacker`, then `signIn` at once, so that a 200 within the slot
 * that try holds is a failure and a slow machine is not:
 * - only a try that was let through (401) holds the slot; one refused with 429 came while an
 *   earlier try still held it (under load this happened), so it is made again once that frees;
 * - when the two took longer than the slot (a loaded machine), the sign-in came after it was free,
 *   so both are asked again; each counted failure doubles the slot, and six rounds reach 32 s.
 */
async function justAfter(attacker: string, email: string, signIn: () => Promise<SignInResponse>): Promise<SignInResponse> {
  for (let attempt = 1; ; attempt += 1) {
    const startedAt = Date.now();
    const attackersTry = await signInFrom(attacker, email, 'wrong password');
    if (attackersTry.status === 429 && attempt < 6) {
      // The slot was still held by an earlier try, so this one holds none: wait for it to free.
      await new Promise((resolve) => setTimeout(resolve, Number(attackersTry.retryAfter) * 1000));
      continue;
    }
    const response = await signIn();
    if (response.status === 429 || attempt === 6 || Date.now() - startedAt < HELD_SLOT_MS) return response;
  }
}

interface Outgoing {
  method: 'GET' | 'POST';
  path: string;
  contentType?: string;
  body?: string;
  cookie?: string;
}

/** One HTTP request from `address`, a 127.0.0.x the local server hands over as the source IP. */
function requestFrom(address: string, { method, path, contentType, body, cookie }: Outgoing): Promise<SignInResponse> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: '127.0.0.1',
        port,
        localAddress: address,
        method,
        path,
        // A forwarding header the client writes must not change whose address counts.
        headers: {
          'x-forwarded-for': '203.0.113.9',
          ...(contentType ? { 'content-type': contentType } : {}),
          ...(cookie ? { cookie } : {}),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: response.statusCode ?? 0,
            retryAfter: response.headers['retry-after'],
            cookies: (response.headers['set-cookie'] ?? []).map((line) => line.split(';')[0]!),
            location: response.headers.location,
            text,
            body: text && (response.headers['content-type'] ?? '').includes('json') ? JSON.parse(text) : {},
          });
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

function signInFrom(address: string, email: string, password: string, cookie?: string): Promise<SignInResponse> {
  return requestFrom(address, {
    method: 'POST',
    path: '/api/v1/sessions',
    contentType: 'application/json',
    body: JSON.stringify({ email, password }),
    ...(cookie ? { cookie } : {}),
  });
}

/** The sign-in form as a browser posts it: its CSRF cookie and value from GET /login, and the cookies it holds. */
async function signInWithFormFrom(address: string, email: string, password: string, cookie?: string): Promise<SignInResponse> {
  const form = await requestFrom(address, { method: 'GET', path: '/login' });
  const csrfCookie = form.cookies.find((line) => line.startsWith('sv_login_csrf='))!;
  const csrfToken = /name="csrf_token" value="([^"]+)"/.exec(form.text)![1]!;
  return requestFrom(address, {
    method: 'POST',
    path: '/login',
    contentType: 'application/x-www-form-urlencoded',
    body: new URLSearchParams({ csrf_token: csrfToken, next: '/login', email, password }).toString(),
    cookie: [csrfCookie, ...(cookie ? [cookie] : [])].join('; '),
  });
}

const deviceCookieOf = (response: SignInResponse): string | undefined => response.cookies.find((line) => line.startsWith('sv_device='));

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

  it('lets a browser that signed in before keep signing in while 10 addresses hammer its email; an unknown device still gets 429', async () => {
    // Prepare: the victim signed in before, in a browser through the form and with the API, and keeps each device cookie.
    const victim = await signedInUser(stack.baseUrl);
    const formBrowser = deviceCookieOf(await signInWithFormFrom('127.0.0.20', victim.email, victim.password));
    const apiBrowser = deviceCookieOf(await signInFrom('127.0.0.21', victim.email, victim.password));
    expect(formBrowser).toMatch(/^sv_device=\S+$/);
    expect(apiBrowser).toMatch(/^sv_device=\S+$/);
    // Act: 17 wrong passwords from 10 addresses, then one more try from each of them.
    const attackers = Array.from({ length: 10 }, (_, index) => `127.0.0.${40 + index}`);
    const hammering: SignInResponse[] = [];
    for (let attempt = 0; attempt < 17; attempt += 1) {
      hammering.push(await signInFrom(attackers[attempt % 10]!, victim.email, 'wrong password'));
    }
    const repeated: SignInResponse[] = [];
    for (const address of attackers) repeated.push(await signInFrom(address, victim.email, 'wrong password'));
    // The victim's browsers, from their own addresses and from a new one, with the right password.
    const viaForm = await signInWithFormFrom('127.0.0.20', victim.email, victim.password, formBrowser);
    const viaApi = await signInFrom('127.0.0.21', victim.email, victim.password, apiBrowser);
    const movedNetwork = await signInFrom('127.0.0.22', victim.email, victim.password, deviceCookieOf(viaApi));
    // Someone with the right password on a device that never signed in, and with a forged device cookie,
    // each just after one more attacker's try (which holds the email's next slot for at least a second).
    const unknownDevice = await justAfter(attackers[0]!, victim.email, () => signInFrom('127.0.0.23', victim.email, victim.password));
    const forged = await justAfter(attackers[1]!, victim.email, () =>
      signInFrom('127.0.0.24', victim.email, victim.password, `sv_device=${'A'.repeat(22)}.${'B'.repeat(43)}`),
    );
    // Assess
    expect(hammering.slice(0, 10).map((response) => response.status)).toEqual(Array(10).fill(401));
    expect(repeated.filter((response) => response.status === 429).length).toBeGreaterThan(5);
    expect(viaForm.status).toBe(303);
    expect(viaForm.cookies.some((line) => line.startsWith('sv_session='))).toBe(true);
    expect(viaApi.status).toBe(200);
    expect(movedNetwork.status).toBe(200);
    expect(unknownDevice).toMatchObject({ status: 429, body: errorEnvelope('RATE_LIMITED') });
    expect(forged).toMatchObject({ status: 429, body: errorEnvelope('RATE_LIMITED') });
  }, 120_000);

  it('limits a known device on its own: a stolen copy of its cookie gets 5 guesses, then the device is locked for that email only', async () => {
    const victim = await signedInUser(stack.baseUrl);
    const other = await signedInUser(stack.baseUrl);
    const device = deviceCookieOf(await signInFrom('127.0.0.60', victim.email, victim.password))!;
    // Act: a stolen copy of the cookie, guessing from many addresses.
    const guesses: SignInResponse[] = [];
    for (let attempt = 0; attempt < 6; attempt += 1) {
      guesses.push(await signInFrom(`127.0.0.${61 + attempt}`, victim.email, 'wrong password', device));
    }
    const rightPassword = await signInFrom('127.0.0.60', victim.email, victim.password, device);
    const forOtherEmail = await signInFrom('127.0.0.60', other.email, other.password, device);
    // Assess
    expect(guesses.map((response) => response.status)).toEqual([401, 401, 401, 401, 401, 429]);
    expect(guesses[5]!.body.error!.message).toMatch(/device/);
    expect(rightPassword.status).toBe(429);
    expect(forOtherEmail.status).toBe(200);
  }, 120_000);

  it("counts a known device's failures for the email too: a stolen cookie's guesses slow unknown devices down, never the owner's other devices", async () => {
    const victim = await signedInUser(stack.baseUrl);
    const stolen = deviceCookieOf(await signInFrom('127.0.0.80', victim.email, victim.password))!;
    const ownersLaptop = deviceCookieOf(await signInFrom('127.0.0.81', victim.email, victim.password))!;
    // Act: five guesses with the stolen copy, then five from addresses that each stay under their own lock.
    for (let attempt = 0; attempt < 5; attempt += 1) {
      expect((await signInFrom(`127.0.0.${82 + attempt}`, victim.email, 'wrong password', stolen)).status).toBe(401);
    }
    for (let attempt = 0; attempt < 5; attempt += 1) {
      expect((await signInFrom(`127.0.0.${90 + attempt}`, victim.email, 'wrong password')).status).toBe(401);
    }
    const unknownDevice = await signInFrom('127.0.0.99', victim.email, victim.password);
    const laptop = await signInFrom('127.0.0.81', victim.email, victim.password, ownersLaptop);
    // Assess: ten failures for the email, so an unknown device is slowed down; the owner's other device is not.
    expect(unknownDevice).toMatchObject({ status: 429, body: errorEnvelope('RATE_LIMITED') });
    expect(laptop.status).toBe(200);
  }, 120_000);
});
