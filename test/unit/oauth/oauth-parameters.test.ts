import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../../../lib/errors.js';
import { parseAuthorizationCodeRequest } from '../../../lib/oauth/grants/authorization-code.js';
import { parseDeviceCodeRequest } from '../../../lib/oauth/grants/device-code.js';
import { parseRefreshTokenRequest } from '../../../lib/oauth/grants/refresh-token.js';
import { oauthParameters, parseAuthorizeParameters, tokenToRevoke } from '../../../lib/oauth/oauth-parameters.js';

const CLIENT_ID = '0190f5c2-7a3e-7b1c-8d2e-123456789abc';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
const authorizeQuery = {
  response_type: 'code',
  client_id: CLIENT_ID,
  redirect_uri: 'https://app.example.com/cb',
  state: 'xyz',
};

describe('parseAuthorizeParameters', () => {
  it('defaults to both scopes and no PKCE', () => {
    expect(parseAuthorizeParameters(authorizeQuery)).toEqual({
      clientId: CLIENT_ID,
      redirectUri: 'https://app.example.com/cb',
      state: 'xyz',
      scopes: ['containers:read', 'containers:write'],
    });
  });

  it('keeps an S256 challenge and a narrower scope', () => {
    const parsed = parseAuthorizeParameters({
      ...authorizeQuery,
      scope: 'containers:read',
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
    });
    expect(parsed).toMatchObject({ scopes: ['containers:read'], codeChallenge: CHALLENGE });
  });

  it('ignores parameters it does not know (RFC 6749 section 3.1)', () => {
    expect(parseAuthorizeParameters({ ...authorizeQuery, nonce: 'n', prompt: 'consent' }).clientId).toBe(CLIENT_ID);
  });

  it.each([
    ['no response_type', { response_type: undefined }, /response_type/],
    ['response_type token', { response_type: 'token' }, /response_type/],
    ['no client_id', { client_id: undefined }, /client_id/],
    ['a client_id that is not a UUID', { client_id: 'abc' }, /client_id/],
    ['no redirect_uri', { redirect_uri: '' }, /redirect_uri/],
    ['no state', { state: undefined }, /state/],
    ['an unknown scope', { scope: 'everything' }, /scope/],
    ['the plain method', { code_challenge: CHALLENGE, code_challenge_method: 'plain' }, /S256/],
    ['a challenge without a method', { code_challenge: CHALLENGE }, /S256/],
    ['a method without a challenge', { code_challenge_method: 'S256' }, /code_challenge/],
    ['a malformed challenge', { code_challenge: 'short', code_challenge_method: 'S256' }, /43/],
  ])('refuses %s with a 400', (_case, override, message) => {
    const query = Object.fromEntries(
      Object.entries({ ...authorizeQuery, ...override }).filter((entry): entry is [string, string] => entry[1] !== undefined),
    );
    expect(() => parseAuthorizeParameters(query)).toThrow(BadRequestError);
    expect(() => parseAuthorizeParameters(query)).toThrow(message);
  });
});

describe('oauthParameters', () => {
  it('drops empty values and keeps strings', () => {
    expect(oauthParameters({ grant_type: 'refresh_token', scope: '', extra: null })).toEqual({ grant_type: 'refresh_token' });
  });

  it.each([
    ['a number', { code: 42 }],
    ['an array body', []],
    ['a null body', null],
  ])('refuses %s', (_case, body) => {
    expect(() => oauthParameters(body)).toThrow(BadRequestError);
  });
});

describe('the grants parse their own parameters', () => {
  it('reads an authorization_code request with its verifier', () => {
    expect(parseAuthorizationCodeRequest({ grant_type: 'authorization_code', code: 'c', redirect_uri: 'r', code_verifier: 'v' })).toEqual({
      code: 'c',
      redirectUri: 'r',
      codeVerifier: 'v',
    });
  });

  it('reads a refresh_token request with a narrower scope', () => {
    expect(parseRefreshTokenRequest({ grant_type: 'refresh_token', refresh_token: 't', scope: 'containers:read' })).toEqual({
      refreshToken: 't',
      scopes: ['containers:read'],
    });
  });

  it.each([
    ['a code exchange without code', parseAuthorizationCodeRequest({ grant_type: 'authorization_code', redirect_uri: 'r' })],
    ['a code exchange without redirect_uri', parseAuthorizationCodeRequest({ grant_type: 'authorization_code', code: 'c' })],
    ['a refresh without refresh_token', parseRefreshTokenRequest({ grant_type: 'refresh_token' })],
    ['a refresh with an unknown scope', parseRefreshTokenRequest({ grant_type: 'refresh_token', refresh_token: 't', scope: 'root' })],
    ['a device code poll without device_code', parseDeviceCodeRequest({})],
  ])('reports %s as a bad request', (_case, parsed) => {
    expect(parsed).toBeInstanceOf(BadRequestError);
  });
});

describe('tokenToRevoke', () => {
  it("takes RFC 7009's token or the spec's refresh_token", () => {
    expect(tokenToRevoke({ token: 'a' })).toBe('a');
    expect(tokenToRevoke({ refresh_token: 'a' })).toBe('a');
  });

  it('refuses two different tokens, and none', () => {
    expect(tokenToRevoke({ token: 'a', refresh_token: 'b' })).toBeInstanceOf(BadRequestError);
    expect(tokenToRevoke({})).toBeInstanceOf(BadRequestError);
  });
});

describe('protocol-named errors (RFC 6749 section 5.2, RFC 7009 section 2.2.1)', () => {
  const codeOf = (value: unknown) => (value as { oauthError?: string }).oauthError;

  it('names what is wrong with a token request', () => {
    expect(codeOf(parseAuthorizationCodeRequest({ grant_type: 'authorization_code', redirect_uri: 'x' }))).toBe('invalid_request');
    expect(codeOf(parseRefreshTokenRequest({ grant_type: 'refresh_token', refresh_token: 'svrt_x', scope: 'admin' }))).toBe(
      'invalid_scope',
    );
    expect(() => oauthParameters({ code: 42 })).toThrow(expect.objectContaining({ oauthError: 'invalid_request' }));
  });

  it('refuses a token_type_hint of a type it does not revoke, and accepts the two it does', () => {
    expect(codeOf(tokenToRevoke({ token: 'svrt_x', token_type_hint: 'id_token' }))).toBe('unsupported_token_type');
    expect(tokenToRevoke({ token: 'svrt_x', token_type_hint: 'refresh_token' })).toBe('svrt_x');
    expect(tokenToRevoke({ token: 'svat_x', token_type_hint: 'access_token' })).toBe('svat_x');
    expect(codeOf(tokenToRevoke({}))).toBe('invalid_request');
  });
});

describe('prompt', () => {
  const base = {
    response_type: 'code',
    client_id: '0190a0e4-5b6c-7d8e-9f00-112233445566',
    redirect_uri: 'https://a.example.com/cb',
    state: 's',
  };

  it('accepts consent, and nothing else', () => {
    expect(parseAuthorizeParameters({ ...base, prompt: 'consent' }).prompt).toBe('consent');
    expect(parseAuthorizeParameters(base).prompt).toBeUndefined();
    expect(() => parseAuthorizeParameters({ ...base, prompt: 'none' })).toThrow(BadRequestError);
    expect(() => parseAuthorizeParameters({ ...base, prompt: 'login consent' })).toThrow(/prompt must be consent/);
  });
});
