import { describe, expect, it } from 'vitest';
import { isRegisteredRedirectUri, redirectUriProblem } from '../../../lib/oauth/redirect-uris.js';

const production = { allowInsecureLoopback: false };
const local = { allowInsecureLoopback: true };

describe('redirectUriProblem', () => {
  it.each(['https://app.example.com/callback', 'https://app.example.com/callback?tenant=1', 'https://app.example.com:8443/cb'])(
    'accepts the https URI %s',
    (uri) => {
      expect(redirectUriProblem(uri, production)).toBeUndefined();
    },
  );

  it.each(['http://localhost:8080/cb', 'http://127.0.0.1:5000/cb', 'http://[::1]/cb'])(
    'accepts the loopback http URI %s only where insecure redirect URIs are allowed',
    (uri) => {
      expect(redirectUriProblem(uri, local)).toBeUndefined();
      expect(redirectUriProblem(uri, production)).toMatch(/https/);
    },
  );

  it.each([
    ['plain http on another host', 'http://app.example.com/cb', /https/],
    ['a fragment', 'https://app.example.com/cb#top', /fragment/],
    ['an empty fragment', 'https://app.example.com/cb#', /fragment/],
    ['a relative path', '/callback', /absolute/],
    ['a scheme without authority', 'https:app.example.com/cb', /absolute/],
    ['a custom scheme', 'com.example.app://callback', /https/],
    ['javascript', 'javascript://alert(1)', /https/],
    ['credentials', 'https://user:pass@app.example.com/cb', /credentials/],
    ['whitespace', 'https://app.example.com/c b', /whitespace/],
    ['a loopback look-alike host', 'http://127.0.0.1.example.com/cb', /https/],
    ['more than 2000 characters', `https://app.example.com/${'a'.repeat(2000)}`, /2000/],
  ])('refuses %s', (_case, uri, problem) => {
    expect(redirectUriProblem(uri, local)).toMatch(problem);
  });
});

describe('isRegisteredRedirectUri', () => {
  it.each([
    ['http://127.0.0.1/callback', 'http://127.0.0.1:53682/callback'],
    ['http://127.0.0.1:8765/callback', 'http://127.0.0.1:40001/callback'],
    ['http://[::1]/callback', 'http://[::1]:61000/callback'],
    ['http://127.0.0.1/callback?x=1', 'http://127.0.0.1:1/callback?x=1'],
  ])("matches a public client's loopback URI %s on any port: %s (RFC 8252 section 7.3)", (registered, presented) => {
    expect(isRegisteredRedirectUri([registered], presented, true)).toBe(true);
    expect(isRegisteredRedirectUri([registered], presented, false)).toBe(false);
  });

  it.each([
    ['another path', 'http://127.0.0.1/callback', 'http://127.0.0.1:5000/callbacks'],
    ['another loopback address', 'http://127.0.0.1/callback', 'http://[::1]:5000/callback'],
    ['localhost, which stays exact', 'http://localhost/callback', 'http://localhost:5000/callback'],
    ['https on loopback', 'https://127.0.0.1/callback', 'https://127.0.0.1:5000/callback'],
    ['an https host with another port', 'https://app.example.com/cb', 'https://app.example.com:8443/cb'],
    ['a port out of range', 'http://127.0.0.1/callback', 'http://127.0.0.1:70000/callback'],
    ['credentials slipped in', 'http://127.0.0.1/callback', 'http://user@127.0.0.1:5000/callback'],
    ['another query', 'http://127.0.0.1/callback?x=1', 'http://127.0.0.1:5000/callback?x=2'],
  ])('refuses %s even for a public client', (_case, registered, presented) => {
    expect(isRegisteredRedirectUri([registered], presented, true)).toBe(false);
  });

  it("matches every client's registered URI exactly", () => {
    expect(isRegisteredRedirectUri(['https://app.example.com/cb'], 'https://app.example.com/cb', false)).toBe(true);
    expect(isRegisteredRedirectUri(['http://127.0.0.1:8765/cb'], 'http://127.0.0.1:8765/cb', false)).toBe(true);
  });
});
