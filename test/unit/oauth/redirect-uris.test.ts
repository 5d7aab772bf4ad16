import { describe, expect, it } from 'vitest';
import { redirectUriProblem } from '../../../lib/oauth/redirect-uris.js';

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
