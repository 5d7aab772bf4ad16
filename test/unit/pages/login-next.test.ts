import { describe, expect, it } from 'vitest';
import { DEFAULT_AFTER_LOGIN, safeNextPath } from '../../../lib/pages/login-page.js';

describe('safeNextPath', () => {
  it.each(['/oauth/consent?request=abc', '/login', '/a/b?c=d&e=f'])('keeps the same-site path %s', (next) => {
    expect(safeNextPath(next)).toBe(next);
  });

  it.each([
    'https://evil.example/',
    '//evil.example/',
    '/\\evil.example',
    'javascript:alert(1)',
    'evil',
    '/\tx',
    '',
    undefined,
  ])('falls back to the default for %s', (next) => {
    expect(safeNextPath(next)).toBe(DEFAULT_AFTER_LOGIN);
  });
});
