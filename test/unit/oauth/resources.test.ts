import { describe, expect, it } from 'vitest';
import { OAuthRequestError } from '../../../lib/errors.js';
import { boundResource, protectedResourceMetadata, resourceUri, targetResource } from '../../../lib/oauth/resources.js';

const ISSUER = 'https://api.example.com';
const codeOf = (value: unknown) => (value instanceof OAuthRequestError ? value.oauthError : value);

describe('the resource parameter (RFC 8707)', () => {
  it('names the MCP server or the REST API by their absolute URIs under the issuer, a trailing slash aside', () => {
    expect(targetResource('https://api.example.com/mcp', ISSUER)).toBe('mcp');
    expect(targetResource('https://api.example.com/mcp/', ISSUER)).toBe('mcp');
    expect(targetResource('https://api.example.com/api/v1', ISSUER)).toBe('api');
    expect(targetResource(undefined, ISSUER)).toBeUndefined();
  });

  it('refuses anything else as invalid_target: another host, a relative URI, a path below a resource, a fragment', () => {
    for (const raw of [
      'https://evil.example/mcp',
      '/mcp',
      'mcp',
      'https://api.example.com/mcp/tools',
      'https://api.example.com/mcp#x',
      'http://api.example.com/mcp',
    ]) {
      expect(codeOf(targetResource(raw, ISSUER)), raw).toBe('invalid_target');
    }
    expect(codeOf(targetResource('https://api.example.com/mcp', undefined))).toBe('invalid_target');
  });

  it('binds a token to the authorization’s resource, or narrows an authorization without one to the REST API, never widens', () => {
    expect(boundResource(undefined, 'mcp')).toBe('mcp');
    expect(boundResource('mcp', 'mcp')).toBe('mcp');
    expect(boundResource(undefined, undefined)).toBeUndefined();
    expect(boundResource('api', undefined)).toBe('api');
    expect(codeOf(boundResource('api', 'mcp'))).toBe('invalid_target');
    expect(codeOf(boundResource('mcp', 'api'))).toBe('invalid_target');
    expect(codeOf(boundResource('mcp', undefined))).toBe('invalid_target');
  });

  it('describes each resource in RFC 9728 metadata naming this issuer as its only authorization server', () => {
    expect(protectedResourceMetadata(ISSUER, 'mcp', ['containers:read'])).toMatchObject({
      resource: resourceUri(ISSUER, 'mcp'),
      authorization_servers: [ISSUER],
      scopes_supported: ['containers:read'],
      bearer_methods_supported: ['header'],
    });
  });
});
