import { describe, expect, it } from 'vitest';
import { BUNDLE_BUDGET_BYTES, bundleHandlers } from '../../infra/bundling.js';
import { eventFunctions } from '../../infra/event-functions.js';
import { repositoryRoot } from '../../infra/paths.js';
import { routes } from '../../lib/http/routes.js';

describe('function bundles', () => {
  it('are minified ESM within the size budget, one per function', () => {
    // Prepare
    const handlers = [...routes.map((route) => route.handler), ...eventFunctions.map((fn) => fn.handler)];
    // Act
    const bundles = bundleHandlers(repositoryRoot, handlers);
    // Assess
    for (const handler of handlers) {
      const code = bundles.get(handler)?.find((file) => file.name === 'index.mjs')?.contents;
      expect(code, handler).toBeDefined();
      expect(code!.byteLength, handler).toBeLessThanOrEqual(BUNDLE_BUDGET_BYTES);
      const text = Buffer.from(code!).toString('utf8');
      expect(text, handler).toMatch(/\bexport\s*\{[^}]*\bas handler\b/);
      // Minified: no line of ordinary source length structure, few newlines for its size.
      expect(text.split('\n').length, handler).toBeLessThan(text.length / 1000);
    }
  });
});
