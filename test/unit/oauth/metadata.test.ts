import { describe, expect, it } from 'vitest';
import { authorizationServerMetadata, issuerFor } from '../../../lib/oauth/metadata.js';

describe('issuerFor', () => {
  it('prefers the configured public base URL, without a trailing slash', () => {
    expect(issuerFor('https://api.example.com/', 'https://abc.execute-api.aws', '/prod')).toBe('https://api.example.com');
  });

  it('falls back to the origin and stage path the request came in on', () => {
    expect(issuerFor(undefined, 'https://abc.execute-api.aws', '/prod')).toBe('https://abc.execute-api.aws/prod');
    expect(issuerFor(undefined, 'http://127.0.0.1:3000', '')).toBe('http://127.0.0.1:3000');
  });
});

describe('authorizationServerMetadata', () => {
  it('puts every endpoint under the issuer and offers only S256 and secret-based client authentication', () => {
    const metadata = authorizationServerMetadata('https://api.example.com/prod');

    expect(metadata.token_endpoint).toBe('https://api.example.com/prod/api/v1/oauth/token');
    expect(metadata.authorization_endpoint).toBe('https://api.example.com/prod/api/v1/oauth/authorize');
    expect(metadata.revocation_endpoint).toBe('https://api.example.com/prod/api/v1/oauth/token/revoke');
    expect(metadata.code_challenge_methods_supported).toEqual(['S256']);
    expect(metadata.token_endpoint_auth_methods_supported).toEqual(['client_secret_basic', 'client_secret_post', 'none']);
  });

  it('advertises everything it supports, and nothing more (RFC 8414 section 2)', () => {
    const metadata = authorizationServerMetadata('https://api.example.com');

    expect(metadata.revocation_endpoint_auth_methods_supported).toEqual(['client_secret_basic', 'client_secret_post', 'none']);
    expect(metadata.prompt_values_supported).toEqual(['consent']);
    expect(metadata.scopes_supported).toEqual(['containers:read', 'containers:write']);
    expect(metadata.grant_types_supported).toEqual(['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code']);
    expect(metadata.device_authorization_endpoint).toBe('https://api.example.com/api/v1/oauth/device_authorization');
    expect(metadata.response_types_supported).toEqual(['code']);
  });

  it('tells agents they may use a client metadata document, a public client or dynamic registration', () => {
    const metadata = authorizationServerMetadata('https://api.example.com');

    expect(metadata.client_id_metadata_document_supported).toBe(true);
    expect(metadata.token_endpoint_auth_methods_supported).toContain('none');
    expect(metadata.registration_endpoint).toBe('https://api.example.com/api/v1/oauth/register');
  });

  it('says that every authorization response names the issuer (RFC 9207)', () => {
    expect(authorizationServerMetadata('https://api.example.com').authorization_response_iss_parameter_supported).toBe(true);
  });
});
