import { describe, expect, it } from 'vitest';
import { BUNDLE_BUDGET_BYTES, BUNDLE_BUDGET_EXCEPTIONS, bundleBudgetOf, bundleHandlers } from '../../infra/bundling.js';
import { eventFunctions, routingFunctions } from '../../infra/event-functions.js';
import { repositoryRoot } from '../../infra/paths.js';
import { routes } from '../../lib/http/routes.js';

describe('function bundles', () => {
  it('are minified ESM within the size budget, one per function', () => {
    // Prepare
    const functions = [...routes, ...eventFunctions, ...routingFunctions].map(({ id, handler }) => ({ id, handler }));
    // Act
    const bundles = bundleHandlers(
      repositoryRoot,
      functions.map((fn) => fn.handler),
    );
    // Assess
    for (const { id, handler } of functions) {
      const code = bundles.get(handler)?.find((file) => file.name === 'index.mjs')?.contents;
      expect(code, handler).toBeDefined();
      expect(code!.byteLength, handler).toBeLessThanOrEqual(bundleBudgetOf(id));
      const text = Buffer.from(code!).toString('utf8');
      expect(text, handler).toMatch(/\bexport\s*\{[^}]*\bas handler\b/);
      // Minified: no line of ordinary source length structure, few newlines for its size.
      expect(text.split('\n').length, handler).toBeLessThan(text.length / 1000);
    }
  });

  it('hold every function to 320 KiB but the named exceptions, each with a reason', () => {
    expect(BUNDLE_BUDGET_BYTES).toBe(320 * 1024);
    const ids = new Set<string>([...routes, ...eventFunctions, ...routingFunctions].map((fn) => fn.id));
    for (const [id, { bytes, reason }] of Object.entries(BUNDLE_BUDGET_EXCEPTIONS)) {
      expect(ids.has(id), id).toBe(true);
      expect(bytes, id).toBeGreaterThan(BUNDLE_BUDGET_BYTES);
      expect(reason.length, id).toBeGreaterThan(20);
    }
    expect(Object.keys(BUNDLE_BUDGET_EXCEPTIONS)).toEqual([
      'createContainer',
      'updateContainer',
      'rollbackRelease',
      'getContainerMetrics',
      'stopContainer',
      'deleteContainer',
      'consoleApp',
      'startContainer',
      'restartContainer',
      'taskStateChanged',
      'probeTask',
      'writeRoutes',
      'reconcile',
      'mcpServer',
      'wakeContainer',
      'createVolume',
      'createSnapshot',
      'downloadSnapshot',
      'deleteSnapshot',
      'deleteVolume',
      'listContainers',
      'getContainerLogs',
      'listReleases',
      'createDeploy',
      'listDeploys',
      'getDeploy',
      'getDeployLogs',
      'buildStatusChanged',
      'getContainerMetricsHistory',
      'loginSubmit',
    ]);
  });
});
