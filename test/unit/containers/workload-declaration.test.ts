import { Command } from 'commander';
import { beforeAll, describe, expect, it } from 'vitest';
import * as z from '../../../lib/zod.js';
import { WORKLOAD, WORKLOAD_KEYS } from '../../../lib/containers/workload.js';
import { WORKLOAD_RULES } from '../../../lib/containers/workload-rules.js';
import type { JsonSchema } from '../../../lib/http/openapi-fields.js';

/*
 * A scratch field, `extra_ports: [{ name, port }]` (a list of objects, as `mounts` is), declared
 * the way a newcomer would add one: an entry in the workload declaration
 * (lib/containers/workload.ts) and its rule (lib/containers/workload-rules.ts), both built here
 * with the extra entry. The modules that derive from the declaration are loaded only after it,
 * as they would be had the field been written there, and each shows the field without having
 * been touched: the request schemas, the stored item, the view, the OpenAPI document's request
 * bodies and record, and from the document the console's form, the CLI's flag and its `get` line.
 */
interface ExtraPort {
  name: string;
  port: number;
}
const scratch = {
  name: 'extra_ports',
  fallback: [] as ExtraPort[],
  toJson: (ports: ExtraPort[]) => ports.map(({ name, port }) => ({ name, port })),
  fromJson: (json: ExtraPort[]) => json.map(({ name, port }) => ({ name, port })),
};
const scratchRule = z
  .array(
    z.strictObject({
      name: z.string().check(z.regex(/^[a-z]+$/, 'must be lowercase letters')),
      port: z.int().check(z.minimum(1), z.maximum(65_535)),
    }),
  )
  .check(z.describe('more ports the container listens on, each by name'));

let derived: {
  schemas: typeof import('../../../lib/containers/schemas.js');
  container: typeof import('../../../lib/containers/container.js');
  entity: typeof import('../../../lib/store/entities/container.js');
  openapi: typeof import('../../../lib/http/openapi.js');
  routes: typeof import('../../../lib/http/routes.js');
  fields: typeof import('../../../lib/http/openapi-fields.js');
  cli: typeof import('../../../cli/src/fields.js');
};

/** The console's form functions (web/console/schema-form.ts), typed as far as this test reads them. */
interface ConsoleForm {
  SchemaFields(props: Record<string, unknown>): unknown;
  emptyState(fields: unknown[]): Record<string, unknown>;
  createBodyOf(fields: unknown[], state: Record<string, unknown>): Record<string, unknown>;
}
let consoleForm: ConsoleForm;

/** The document as a client generator reads it: JSON. */
let document: {
  paths: Record<
    string,
    Record<string, { requestBody: { content: Record<string, { schema: JsonSchema & { properties: Record<string, JsonSchema> } }> } }>
  >;
  components: { schemas: Record<string, JsonSchema & { properties: Record<string, JsonSchema>; required: string[] }> };
};

beforeAll(async () => {
  Object.assign(WORKLOAD, { extraPorts: scratch });
  Object.assign(WORKLOAD_RULES, { extraPorts: scratchRule });
  (WORKLOAD_KEYS as string[]).push('extraPorts');
  derived = {
    schemas: await import('../../../lib/containers/schemas.js'),
    container: await import('../../../lib/containers/container.js'),
    entity: await import('../../../lib/store/entities/container.js'),
    openapi: await import('../../../lib/http/openapi.js'),
    routes: await import('../../../lib/http/routes.js'),
    fields: await import('../../../lib/http/openapi-fields.js'),
    cli: await import('../../../cli/src/fields.js'),
  };
  // The console's sources are the browser's (web/console/tsconfig.json): loaded by a path the root project does not type-check.
  const consolePath = '../../../web/console/schema-form.js';
  consoleForm = await import(consolePath);
  const { createContainerBody, updateContainerBody } = derived.schemas;
  const { createContainer, updateContainer, getContainer } = derived.routes;
  document = JSON.parse(
    JSON.stringify(
      derived.openapi.openApiDocument([
        { route: createContainer, inputSchemas: { body: createContainerBody } },
        { route: updateContainer, inputSchemas: { body: updateContainerBody } },
        { route: getContainer, inputSchemas: {} },
      ]),
    ),
  );
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

const bodyOf = (path: string, method: string) => document.paths[path]![method]!.requestBody.content['application/json']!.schema;
const createFields = () => derived.fields.bodyFieldsOf(derived.fields.containerRequestSchemasOf(document).create);
const updateFields = () => derived.fields.bodyFieldsOf(derived.fields.containerRequestSchemasOf(document).update);

/** What a tree of Preact nodes shows: its text and the ids of its elements, function components called. */
function shown(node: unknown): { text: string[]; ids: string[] } {
  if (Array.isArray(node)) {
    const parts = node.map(shown);
    return { text: parts.flatMap((part) => part.text), ids: parts.flatMap((part) => part.ids) };
  }
  if (typeof node === 'string' || typeof node === 'number') return { text: [String(node)], ids: [] };
  if (!node || typeof node !== 'object' || !('props' in node)) return { text: [], ids: [] };
  const { type, props } = node as { type: unknown; props: { id?: string; children?: unknown } };
  if (typeof type === 'function') return shown(type(props));
  const inner = shown(props.children);
  return { text: inner.text, ids: [...(props.id ? [props.id] : []), ...inner.ids] };
}

describe('a list-of-objects field added to the workload declaration', () => {
  it('is taken, defaulted and checked by the create and PATCH request schemas', () => {
    const { createContainerBody, updateContainerBody } = derived.schemas;
    const ports = [{ name: 'admin', port: 9000 }];
    expect(z.parse(createContainerBody, { hostname: 'scratch', extra_ports: ports })).toMatchObject({ extra_ports: ports });
    expect(z.parse(createContainerBody, { hostname: 'scratch' })).toMatchObject({ extra_ports: [] });
    const refused = z.safeParse(createContainerBody, { hostname: 'scratch', extra_ports: [{ name: 'Admin', port: 9000 }] });
    expect(refused.error?.issues).toEqual([
      expect.objectContaining({ path: ['extra_ports', 0, 'name'], message: 'must be lowercase letters' }),
    ]);
    expect(z.parse(updateContainerBody, { extra_ports: ports })).toEqual({ extra_ports: ports });
  });

  it('is stored under its name and read back, and an item written before it existed reads its fallback', () => {
    const container = storedContainer({ extra_ports: [{ name: 'admin', port: 9000 }] });
    expect(Reflect.get(container, 'extraPorts')).toEqual([{ name: 'admin', port: 9000 }]);
    expect(derived.entity.containerEntity.toItem(container)).toMatchObject({ extra_ports: [{ name: 'admin', port: 9000 }] });
    expect(Reflect.get(storedContainer({}), 'extraPorts')).toEqual([]);
  });

  it('is in the API view of a container', () => {
    const view = derived.container.containerView(storedContainer({ extra_ports: [{ name: 'admin', port: 9000 }] }));
    expect(view).toMatchObject({ extra_ports: [{ name: 'admin', port: 9000 }] });
  });

  it('is in the OpenAPI document: the create and PATCH bodies, and the container record every answer carries', () => {
    const item = { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' } } };
    expect(bodyOf('/api/v1/containers', 'post').properties.extra_ports).toMatchObject({ type: 'array', default: [], items: item });
    expect(bodyOf('/api/v1/containers/{container_id}', 'patch').properties.extra_ports).toMatchObject({ type: 'array', items: item });
    const record = document.components.schemas.Container!;
    expect(record.properties.extra_ports).toMatchObject({ type: 'array', items: item });
    expect(record.required).toContain('extra_ports');
  });

  it("is a field of the console's create form, rows of its objects' fields, sent as a list of objects", () => {
    const fields = createFields();
    const state = consoleForm.emptyState(fields);
    const form = shown(consoleForm.SchemaFields({ form: 'create', fields, state, onChange: () => {}, errors: {} }));
    expect(form.ids).toContain('create-extra_ports');
    expect(form.text).toEqual(expect.arrayContaining(['Extra ports', 'Add extra port']));
    const body = consoleForm.createBodyOf(fields, { ...state, extra_ports: [{ name: 'admin', port: '9000' }] });
    expect(body.extra_ports).toEqual([{ name: 'admin', port: 9000 }]);
  });

  it('is a CLI flag of create and update, one object a flag, and a line of `get`', () => {
    const command = derived.cli.addFieldOptions(new Command('update').exitOverride(), updateFields());
    expect(command.options.map((option) => option.long)).toContain('--extra-port');
    command.parse(['--extra-port', 'admin:9000', '--extra-port', 'metrics:9100'], { from: 'user' });
    const body = derived.cli.bodyFromOptions(updateFields(), command.opts());
    expect(body).toEqual({
      extra_ports: [
        { name: 'admin', port: 9000 },
        { name: 'metrics', port: 9100 },
      ],
    });
    expect(derived.cli.fieldRows(updateFields(), body)).toContainEqual(['extra_ports', 'admin:9000 metrics:9100']);
  });
});
