import { describe, expect, it } from 'vitest';
import { BadRequestError, UnauthorizedError } from '../../../lib/errors.js';
import { clientCredentialsOf, parseBasicAuthorization, verifyClient } from '../../../lib/oauth/client-authentication.js';
import { sha256Hex } from '../../../lib/identity/secrets.js';

const basic = (userPass: string) => `Basic ${Buffer.from(userPass, 'utf8').toString('base64')}`;
const CLIENT_ID = '0190f5c2-7a3e-7b1c-8d2e-123456789abc';

describe('parseBasicAuthorization', () => {
  it('decodes the client id and secret', () => {
    expect(parseBasicAuthorization(basic(`${CLIENT_ID}:svcs_secret`))).toEqual({ clientId: CLIENT_ID, clientSecret: 'svcs_secret' });
  });

  it('form-decodes both parts, as RFC 6749 section 2.3.1 requires', () => {
    expect(parseBasicAuthorization(basic('my%3Aclient:p%40ss+word%2B%25'))).toEqual({
      clientId: 'my:client',
      clientSecret: 'p@ss word+%',
    });
  });

  it('splits at the first colon only', () => {
    expect(parseBasicAuthorization(basic('id:se:cret'))).toEqual({ clientId: 'id', clientSecret: 'se:cret' });
  });

  it('takes the scheme name in any case', () => {
    expect(parseBasicAuthorization(basic('id:secret').replace('Basic', 'bAsIc'))).toEqual({ clientId: 'id', clientSecret: 'secret' });
  });

  it.each([
    ['another scheme', 'Bearer abc'],
    ['no colon', basic('idsecret')],
    ['an empty client id', basic(':secret')],
    ['invalid base64', 'Basic !!!!'],
    ['truncated base64', 'Basic aWQ6c2VjcmV0P'],
    ['a broken percent-encoding', basic('id:%E0%A4%A')],
    ['nothing after the scheme', 'Basic '],
  ])('refuses %s', (_case, header) => {
    expect(parseBasicAuthorization(header)).toBeUndefined();
  });
});

describe('clientCredentialsOf', () => {
  it('takes Basic credentials', () => {
    expect(clientCredentialsOf(basic(`${CLIENT_ID}:s`), {})).toEqual({
      clientId: CLIENT_ID,
      clientSecret: 's',
      method: 'client_secret_basic',
    });
  });

  it('takes body credentials', () => {
    expect(clientCredentialsOf(undefined, { client_id: CLIENT_ID, client_secret: 's' })).toEqual({
      clientId: CLIENT_ID,
      clientSecret: 's',
      method: 'client_secret_post',
    });
  });

  it('allows Basic with the same client_id repeated in the body', () => {
    expect(clientCredentialsOf(basic(`${CLIENT_ID}:s`), { client_id: CLIENT_ID }).method).toBe('client_secret_basic');
  });

  it('refuses Basic together with a body secret as a bad request', () => {
    expect(() => clientCredentialsOf(basic(`${CLIENT_ID}:s`), { client_id: CLIENT_ID, client_secret: 's' })).toThrow(BadRequestError);
  });

  it('refuses Basic together with a different body client_id as a bad request', () => {
    expect(() => clientCredentialsOf(basic(`${CLIENT_ID}:s`), { client_id: 'other' })).toThrow(BadRequestError);
  });

  it('answers a malformed Authorization header 401 with a Basic challenge', () => {
    const attempt = () => clientCredentialsOf('Basic !!!', { client_id: CLIENT_ID, client_secret: 's' });
    expect(attempt).toThrow(UnauthorizedError);
    try {
      attempt();
    } catch (error) {
      expect((error as UnauthorizedError).headers['WWW-Authenticate']).toMatch(/^Basic /);
    }
  });

  it('answers missing credentials 401', () => {
    expect(() => clientCredentialsOf(undefined, {})).toThrow(UnauthorizedError);
  });

  it('reads a client_id without a secret as a public client (method none), which only a public client passes', () => {
    const credentials = clientCredentialsOf(undefined, { client_id: CLIENT_ID });
    expect(credentials).toEqual({ clientId: CLIENT_ID, clientSecret: '', method: 'none' });
    expect(() => verifyClient(credentials, { clientId: CLIENT_ID, appId: 'app' })).not.toThrow();
    expect(() => verifyClient(credentials, { clientId: CLIENT_ID, appId: 'app', secretHash: 'a'.repeat(64) })).toThrow(UnauthorizedError);
    expect(() =>
      verifyClient({ ...credentials, clientSecret: 'svcs_x', method: 'client_secret_post' }, { clientId: CLIENT_ID, appId: 'app' }),
    ).toThrow(UnauthorizedError);
  });
});

describe('verifyClient', () => {
  const now = new Date('2026-11-25T12:00:00.000Z');
  const client = {
    clientId: CLIENT_ID,
    appId: CLIENT_ID,
    secretHash: sha256Hex('svcs_new'),
    previousSecret: { hash: sha256Hex('svcs_old'), expiresAt: '2026-11-25T12:00:01.000Z' },
  };
  const presenting = (clientSecret: string) => ({ clientId: CLIENT_ID, clientSecret, method: 'client_secret_post' as const });

  it('accepts the current secret, and the previous one until its overlap ends', () => {
    expect(() => verifyClient(presenting('svcs_new'), client, now)).not.toThrow();
    expect(() => verifyClient(presenting('svcs_old'), client, now)).not.toThrow();
    expect(() => verifyClient(presenting('svcs_old'), client, new Date('2026-11-25T12:00:01.000Z'))).toThrow(UnauthorizedError);
  });

  it('refuses any other secret, with or without a previous one', () => {
    expect(() => verifyClient(presenting('svcs_other'), client, now)).toThrow(UnauthorizedError);
    const { previousSecret: _none, ...withoutPrevious } = client;
    expect(() => verifyClient(presenting('svcs_old'), withoutPrevious, now)).toThrow(UnauthorizedError);
    expect(() => verifyClient(presenting('svcs_new'), undefined, now)).toThrow(UnauthorizedError);
  });
});
