import { beforeAll, describe, expect, it } from 'vitest';
import * as z from '../../../lib/zod.js';
import { WORKLOAD, WORKLOAD_KEYS } from '../../../lib/containers/workload.js';
import { WORKLOAD_RULES } from '../../../lib/containers/workload-rules.js';

/*
 * A scratch field, `volumes`, declared the way a newcomer would add one: an entry in the workload
 * declaration (lib/containers/workload.ts) and its rule (lib/containers/workload-rules.ts). The
 * modules that derive from the declaration are loaded only after it, as they would be had the
 * field been written there, and each shows the field without having been touched.
 */
const scratch = { name: 'volumes', fallback: [] as string[], toJson: (value: string[]) => value, fromJson: (json: string[]) => json };

let derived: {
  schemas: typeof import('../../../lib/containers/schemas.js');
  container: typeof import('../../../lib/containers/container.js');
  entity: typeof import('../../../lib/store/entities/container.js');
  openapi: typeof import('../../../lib/http/openapi.js');
  routes: typeof import('../../../lib/http/routes.js');
};

beforeAll(async () => {
  Object.assign(WORKLOAD, { volumes: scratch });
  Object.assign(WORKLOAD_RULES, { volumes: z.array(z.string().check(z.regex(/^\//, 'must be an absolute path'))) });
  (WORKLOAD_KEYS as string[]).push('volumes');
  derived = {
    schemas: await import('../../../lib/containers/schemas.js'),
    container: await import('../../../lib/containers/container.js'),
    entity: await import('../../../lib/store/entities/container.js'),
    openapi: await import('../../../lib/http/openapi.js'),
    routes: await import('../../../lib/http/routes.js'),
  };
});

/** A stored container as the entity reads it, with the workload's fallbacks. */
function storedContainer(workload: Record<string, unknown>) {
  return derived.entity.containerEntity.fromItem({
    pk: 'CONTAINER#c1',
    sk: 'CONTAINER#c1',
    id: '0f8fad5b-d9cb-469f-a165-70867728950e',
    user_id: 'u1',
    hostname: 'scratch',
    state: 'stopped',
    created_at: '2026-11-27T00:00:00.000Z',
    updated_at: '2026-11-27T00:00:00.000Z',
    version: 1,
    ...workload,
  });
}

describe('a field added to the workload declaration', () => {
  it('is taken, defaulted and checked by the create and PATCH request schemas', () => {
    const { createContainerBody, updateContainerBody } = derived.schemas;
    expect(z.parse(createContainerBody, { hostname: 'scratch', volumes: ['/data'] })).toMatchObject({ volumes: ['/data'] });
    expect(z.parse(createContainerBody, { hostname: 'scratch' })).toMatchObject({ volumes: [] });
    const refused = z.safeParse(createContainerBody, { hostname: 'scratch', volumes: ['data'] });
    expect(refused.error?.issues).toEqual([expect.objectContaining({ path: ['volumes', 0], message: 'must be an absolute path' })]);
    expect(z.parse(updateContainerBody, { volumes: ['/srv'] })).toEqual({ volumes: ['/srv'] });
  });

  it('is stored under its name and read back, and an item written before it existed reads its fallback', () => {
    const container = storedContainer({ volumes: ['/data'] });
    expect(Reflect.get(container, 'volumes')).toEqual(['/data']);
    expect(derived.entity.containerEntity.toItem(container)).toMatchObject({ volumes: ['/data'] });
    expect(Reflect.get(storedContainer({}), 'volumes')).toEqual([]);
  });

  it('is in the API view of a container', () => {
    expect(derived.container.containerView(storedContainer({ volumes: ['/data'] }))).toMatchObject({ volumes: ['/data'] });
  });

  it('is in the OpenAPI request schemas of create and PATCH', () => {
    const { createContainerBody, updateContainerBody } = derived.schemas;
    const document = derived.openapi.openApiDocument([
      { route: derived.routes.createContainer, inputSchemas: { body: createContainerBody } },
      { route: derived.routes.updateContainer, inputSchemas: { body: updateContainerBody } },
    ]);
    // Read back as JSON, the way a client generator reads the document.
    const { paths } = JSON.parse(JSON.stringify(document));
    const bodyOf = (path: string, method: string) => paths[path][method].requestBody.content['application/json'].schema;
    expect(bodyOf('/api/v1/containers', 'post').properties.volumes).toMatchObject({ type: 'array', default: [] });
    expect(bodyOf('/api/v1/containers/{container_id}', 'patch').properties.volumes).toMatchObject({ type: 'array' });
  });
});
