import { describe, expect, it } from 'vitest';
import { formatScope, parseScope } from '../../../lib/oauth/scopes.js';

describe('parseScope', () => {
  it('grants both scopes when the parameter is absent or empty', () => {
    expect(parseScope(undefined)).toEqual(['containers:read', 'containers:write']);
    expect(parseScope('')).toEqual(['containers:read', 'containers:write']);
  });

  it('returns a subset in canonical order, whatever order it was asked in', () => {
    expect(parseScope('containers:write containers:read')).toEqual(['containers:read', 'containers:write']);
    expect(parseScope('containers:read')).toEqual(['containers:read']);
  });

  it('collapses a scope named twice', () => {
    expect(parseScope('containers:read containers:read')).toEqual(['containers:read']);
  });

  it.each([
    ['an unknown scope', 'containers:read admin'],
    ['a different case', 'Containers:Read'],
    ['a comma list', 'containers:read,containers:write'],
    ['a double space', 'containers:read  containers:write'],
    ['a leading space', ' containers:read'],
  ])('refuses %s', (_case, raw) => {
    expect(parseScope(raw)).toBeUndefined();
  });
});

describe('formatScope', () => {
  it('joins scopes with single spaces, as RFC 6749 section 3.3 writes them', () => {
    expect(formatScope(['containers:read', 'containers:write'])).toBe('containers:read containers:write');
  });
});
