import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { routes } from '../../../lib/http/routes.js';
import { buildOpenApiJson, buildOpenApiTypes, OPENAPI_PATH, OPENAPI_TYPES_PATH } from '../../../scripts/openapi-build.js';
import { contractProblem } from '../../support/contract-check.js';

// Generating the document imports every handler module: seconds on a loaded 2-core machine.
describe('the OpenAPI document', { timeout: 90_000 }, () => {
  it('is committed as generated from the route table (run npm run openapi after changing a route)', async () => {
    const generated = await buildOpenApiJson();
    expect(await readFile(OPENAPI_PATH, 'utf8')).toBe(generated);
    expect(await readFile(OPENAPI_TYPES_PATH, 'utf8')).toBe(await buildOpenApiTypes(generated));
    // Loading every handler module and printing the types took over 30 s beside the other projects' tests (load average 15).
  }, 90_000);

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

  it('documents what every operation answers on success, with a schema for each JSON answer', async () => {
    const document = JSON.parse(await buildOpenApiJson());
    for (const route of routes) {
      const responses = document.paths[route.path.replace('+}', '}')][route.method.toLowerCase()].responses;
      const successes = Object.keys(responses).filter((status) => Number(status) < 400);
      expect(successes, route.id).not.toEqual([]);
      for (const status of successes) {
        const response = responses[status];
        if (Number(status) >= 300) expect(response.headers?.Location, `${route.id} ${status}`).toBeDefined();
        const json = response.content?.['application/json'];
        if (json) expect(json.schema, `${route.id} ${status}`).toBeDefined();
      }
    }
    expect(document.paths['/api/v1/containers/{container_id}'].get.responses['200'].content['application/json'].schema).toEqual({
      type: 'object',
      required: ['data'],
      properties: { data: { $ref: '#/components/schemas/Container' } },
    });
    expect(document.components.schemas.Container.required).toEqual(
      expect.arrayContaining(['id', 'hostname', 'state', 'mounts', 'idle_timeout_s']),
    );
  });
});

describe("the e2e suite's check of each answer against the document", () => {
  const json = 'application/json; charset=utf-8';
  it('refuses a record missing a field, a field the record does not name, an undocumented success and a bare error', () => {
    expect(contractProblem('GET', 'http://127.0.0.1/api/v1/users/me', 200, json, { data: { id: 'a' } })).toContain(
      "must have required property 'email'",
    );
    const user = {
      id: 'a',
      email: 'a@example.com',
      role: 'user',
      created_at: '2026-11-28T15:00:00.000Z',
      status: 'active',
      must_change_password: false,
    };
    expect(
      contractProblem('GET', 'http://127.0.0.1/api/v1/users?limit=5', 200, json, { data: [{ ...user, password_hash: 'x' }] }),
    ).toContain('password_hash');
    expect(contractProblem('GET', 'http://127.0.0.1/api/v1/users', 200, json, { data: [user] })).toBeUndefined();
    expect(contractProblem('POST', 'http://127.0.0.1/api/v1/volumes', 200, json, { data: {} })).toContain('does not list');
    expect(contractProblem('GET', 'http://127.0.0.1/api/v1/containers/x', 404, json, { error: { code: 'NOT_FOUND' } })).toContain(
      "must have required property 'message'",
    );
  });
});
