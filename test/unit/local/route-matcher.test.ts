import { describe, expect, it } from 'vitest';
import { compilePathTemplate, createRouteMatcher } from '../../../lib/local/route-matcher.js';

const routes = [
  { id: 'listTokens', method: 'GET', path: '/api/v1/tokens' },
  { id: 'createToken', method: 'POST', path: '/api/v1/tokens' },
  { id: 'deleteToken', method: 'DELETE', path: '/api/v1/tokens/{token_id}' },
  { id: 'getUser', method: 'GET', path: '/api/v1/users/{user_id}' },
  { id: 'getMe', method: 'GET', path: '/api/v1/users/me' },
  { id: 'getFile', method: 'GET', path: '/files/{file_path+}' },
] as const;

const matchRoute = createRouteMatcher(routes);

describe('compilePathTemplate', () => {
  it('turns each {param} into one path segment', () => {
    const { pattern, parameterNames } = compilePathTemplate('/a/{first}/b/{second}');

    expect(parameterNames).toEqual(['first', 'second']);
    expect(pattern.test('/a/1/b/2')).toBe(true);
    expect(pattern.test('/a/1/x/b/2')).toBe(false);
  });

  it('treats regular-expression characters in literal segments literally', () => {
    const { pattern } = compilePathTemplate('/.well-known/openid-configuration');

    expect(pattern.test('/.well-known/openid-configuration')).toBe(true);
    expect(pattern.test('/Xwell-known/openid-configuration')).toBe(false);
  });
});

describe('createRouteMatcher', () => {
  it('matches a literal path and reports no path parameters as null', () => {
    expect(matchRoute('GET', '/api/v1/tokens')).toEqual({ kind: 'matched', route: routes[0], pathParameters: null });
  });

  it('picks the route for the method among routes sharing a path', () => {
    const match = matchRoute('POST', '/api/v1/tokens');

    expect(match.kind === 'matched' && match.route.id).toBe('createToken');
  });

  it('extracts and decodes path parameters', () => {
    expect(matchRoute('DELETE', '/api/v1/tokens/tok%20en%2F1')).toEqual({
      kind: 'matched',
      route: routes[2],
      pathParameters: { token_id: 'tok en/1' },
    });
  });

  it('keeps a malformed percent-encoding as sent instead of failing', () => {
    const match = matchRoute('DELETE', '/api/v1/tokens/100%');

    expect(match.kind === 'matched' && match.pathParameters).toEqual({ token_id: '100%' });
  });

  it('prefers a literal segment over a parameter, whatever the table order', () => {
    const literal = matchRoute('GET', '/api/v1/users/me');
    const parameter = matchRoute('GET', '/api/v1/users/42');

    expect(literal.kind === 'matched' && literal.route.id).toBe('getMe');
    expect(parameter.kind === 'matched' && parameter.pathParameters).toEqual({ user_id: '42' });
  });

  it('lets a greedy parameter span several segments', () => {
    const match = matchRoute('GET', '/files/a/b/c.txt');

    expect(match.kind === 'matched' && match.pathParameters).toEqual({ file_path: 'a/b/c.txt' });
  });

  it('does not match a trailing slash', () => {
    expect(matchRoute('GET', '/api/v1/tokens/')).toEqual({ kind: 'not-found' });
  });

  it('does not let a parameter match an empty segment', () => {
    expect(matchRoute('DELETE', '/api/v1/tokens/')).toEqual({ kind: 'not-found' });
  });

  it('reports the allowed methods when the path exists but the method does not', () => {
    expect(matchRoute('PUT', '/api/v1/tokens')).toEqual({ kind: 'method-not-allowed', allowedMethods: ['GET', 'POST'] });
  });

  it('reports not-found for an unknown path', () => {
    expect(matchRoute('GET', '/nope')).toEqual({ kind: 'not-found' });
  });
});
