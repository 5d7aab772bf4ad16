import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { routes } from '../../../lib/http/routes.js';
import { buildOpenApiJson, OPENAPI_PATH } from '../../../scripts/openapi-build.js';

// Generating the document imports every handler module: seconds on a loaded 2-core machine.
describe('the OpenAPI document', { timeout: 30_000 }, () => {
  it('is committed as generated from the route table (run npm run openapi after changing a route)', async () => {
    const generated = await buildOpenApiJson();
    expect(await readFile(OPENAPI_PATH, 'utf8')).toBe(generated);
    // Loading every handler module takes over 5 s on a loaded 2-core machine (load average 18).
  }, 30_000);

  it('describes every route, with its request body schema and error responses', async () => {
    const document = JSON.parse(await buildOpenApiJson());
    for (const route of routes) {
      const operation = document.paths[route.path.replace('+}', '}')]?.[route.method.toLowerCase()];
      expect(operation, `${route.method} ${route.path}`).toBeDefined();
      expect(operation.operationId).toBe(route.id);
      if (route.access !== 'public' && route.access !== 'browser') expect(operation.responses['401']).toBeDefined();
    }
    const createContainer = document.paths['/api/v1/containers'].post;
    expect(createContainer.requestBody.content['application/json'].schema).toMatchObject({
      type: 'object',
      required: ['hostname'],
      additionalProperties: false,
    });
    expect(createContainer.security).toContainEqual({ oauth2: ['containers:write'] });
  });
});
