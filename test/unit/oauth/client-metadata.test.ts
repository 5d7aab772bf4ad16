import { describe, expect, it } from 'vitest';
import { InvalidClientError } from '../../../lib/errors.js';
import { documentApp, isClientIdUrl } from '../../../lib/oauth/client-metadata.js';

const CLIENT_ID = 'https://agent.example.com/oauth/client.json';
const rules = { allowInsecureLoopback: true };
const now = new Date('2026-11-28T10:00:00.000Z');
const documentOf = (fields: Record<string, unknown>) =>
  JSON.stringify({ client_id: CLIENT_ID, client_name: 'Agent', redirect_uris: ['http://127.0.0.1/callback'], ...fields });

describe('isClientIdUrl', () => {
  it.each([CLIENT_ID, 'https://agent.example.com:8443/c', 'https://agent.example.com/c?v=1'])('takes %s', (url) => {
    expect(isClientIdUrl(url)).toBe(true);
  });

  it.each([
    ['http', 'http://agent.example.com/client.json'],
    ['no path', 'https://agent.example.com'],
    ['the root path', 'https://agent.example.com/'],
    ['a dot segment', 'https://agent.example.com/a/../client.json'],
    ['a fragment', 'https://agent.example.com/client.json#x'],
    ['credentials', 'https://user:pw@agent.example.com/client.json'],
    ['whitespace', 'https://agent.example.com/client .json'],
    ['a UUID', '0190f1c2-0000-7000-8000-000000000002'],
    ['over 1024 characters', `https://agent.example.com/${'a'.repeat(1024)}`],
  ])('refuses %s', (_case, url) => {
    expect(isClientIdUrl(url)).toBe(false);
  });
});

describe('documentApp', () => {
  it('keeps a public application nobody owns, bound to the listed redirect URIs, expiring a day later', () => {
    const app = documentApp(CLIENT_ID, documentOf({}), rules, now);

    expect(app).toMatchObject({
      clientId: CLIENT_ID,
      name: 'Agent',
      redirectUris: ['http://127.0.0.1/callback'],
      tokenEndpointAuthMethod: 'none',
      expiresAt: '2026-11-29T10:00:00.000Z',
    });
    expect(documentApp(CLIENT_ID, documentOf({}), rules, now).id).toBe(app.id);
  });

  it.each([
    ['not JSON', '{', /not valid JSON/],
    ['another client_id', documentOf({ client_id: `${CLIENT_ID}/` }), /another client_id/],
    ['no redirect URIs', documentOf({ redirect_uris: [] }), /1 to 10 redirect_uris/],
    [
      'an http redirect URI off loopback',
      documentOf({ redirect_uris: ['http://agent.example.com/cb'] }),
      /redirect URI that must use https/,
    ],
    ['a client secret method', documentOf({ token_endpoint_auth_method: 'client_secret_basic' }), /other than none/],
    ["this service's CLI name", documentOf({ client_name: 'container-hosting CLI' }), /own CLI/],
  ])('refuses a document with %s as invalid_client', (_case, text, message) => {
    const refusal = (() => {
      try {
        documentApp(CLIENT_ID, text, rules, now);
      } catch (error) {
        return error;
      }
    })();

    expect(refusal).toBeInstanceOf(InvalidClientError);
    expect((refusal as Error).message).toMatch(message);
  });
});
