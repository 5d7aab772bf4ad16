import { describe, expect, it } from 'vitest';
import { DEFAULT_AFTER_LOGIN, safeNextPath } from '../../../lib/pages/login-page.js';

describe('safeNextPath', () => {
  it.each(['/oauth/consent?request=abc', '/login', '/a/b?c=d&e=f'])('keeps the same-site path %s', (next) => {
    expect(safeNextPath(next)).toBe(next);
  });

  it.each([
    ['/a/./b', '/a/b'],
    ['/a/../b', '/b'],
    ['/a/%2e%2e/b', '/b'],
  ])('resolves the dot segments of %s to %s', (next, location) => {
    expect(safeNextPath(next)).toBe(location);
  });

  it.each(['https://evil.example/', '//evil.example/', '/\\evil.example', 'javascript:alert(1)', 'evil', '/\tx', '', undefined])(
    'falls back to the default for %s',
    (next) => {
      expect(safeNextPath(next)).toBe(DEFAULT_AFTER_LOGIN);
    },
  );

  // Issue 7 item 1: inputs that pass a check on the raw value but normalise to another host.
  it.each([
    '/.//evil.example/x',
    '/./%2fevil.example',
    '/..//evil.example/x',
    '/a/..//evil.example',
    '/%2e//evil.example/x',
    '/%2E%2E//evil.example/x',
    '/%2e%2e/%2fevil.example',
    '/.%2e//evil.example',
    '/%5cevil.example',
    '/%5c%5cevil.example',
    '/\\\\evil.example',
    '/x\\..\\..\\/evil.example',
    '/\t/evil.example',
    '/\n/evil.example',
    '/\r\n//evil.example',
    '/%09/evil.example',
    '/%0a/evil.example',
    '/%00',
    '/\u007f',
    '///evil.example',
    '/\\/evil.example',
    'https:/evil.example',
    'http://127.0.0.1/',
    '%2f%2fevil.example',
    '/%zz',
  ])('never writes another host into Location for %j', (next) => {
    const location = safeNextPath(next);
    expect(location.startsWith('/') && !location.startsWith('//') && !location.includes('\\')).toBe(true);
    expect(new URL(location, 'https://service.example').host).toBe('service.example');
    expect(location).toBe(DEFAULT_AFTER_LOGIN);
  });
});
