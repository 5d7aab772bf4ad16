import { containerView } from '../containers/container.js';
import type { ContainerLogReader } from '../containers/container-log-reader.js';
import type { ContainerService } from '../containers/container-service.js';
import { logsQuerySchema } from '../containers/logs-query.js';
import { type ContainerMetricsHistory, metricsHistoryQuerySchema } from '../containers/metrics-history.js';
import type { RunPolicy } from '../containers/run-policy.js';
import { createContainerBody, updateContainerBody } from '../containers/schemas.js';
import { workloadChangesFromJson, workloadFromJson } from '../containers/workload.js';
import { NotFoundError } from '../errors.js';
import { pageQuerySchema } from '../http/pagination.js';
import { parseInput } from '../http/middleware/validate-input.js';
import type { OAuthScope, Principal } from '../identity/principal.js';
import { isUuid } from '../ids.js';
import * as z from '../zod.js';

/** What the tools call: the same services the REST endpoints of containers call (functions/containers). */
export interface ContainerToolServices {
  containers: ContainerService;
  logs: ContainerLogReader;
  metricsHistory: ContainerMetricsHistory;
  runPolicy: RunPolicy;
}

/** MCP's tool annotations (modelcontextprotocol.io, "Tools"): hints a client shows or acts on, never trusted by us. */
export interface ToolHints {
  readOnlyHint: boolean;
  /** The specification's default for a tool that is not read-only is `true`, so every writing tool says which it is. */
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  /** Each tool acts on this service only. */
  openWorldHint: false;
}

/**
 * Where a tool's arguments come from: its REST twin's declarations (the request body's or the
 * query's zod schema), plus `container_id` where the twin takes it in its path. No field is
 * declared twice: the tool's JSON Schema and its validation are both derived from those schemas.
 */
interface ToolSpec<Fields extends z.ZodMiniType> {
  name: string;
  title: string;
  description: string;
  scope: OAuthScope;
  /** The REST route it stands for (lib/http/routes/containers.ts), whose scope it needs. */
  restTwin: string;
  hints: ToolHints;
  containerId?: true;
  /** A query schema reads strings: the tool passes a number as its decimal string, as a URL would carry it. */
  fields: { from: 'body' | 'query'; schema: Fields };
  call(services: ContainerToolServices, principal: Principal, input: { containerId: string; fields: z.infer<Fields> }): Promise<unknown>;
}

/** One tool: a thin call of a container service, with the scope its REST twin needs. */
export interface ContainerTool {
  name: string;
  title: string;
  description: string;
  scope: OAuthScope;
  restTwin: string;
  hints: ToolHints;
  /** Its arguments' JSON Schema (tools/list). */
  inputSchema(): ToolInputSchema;
  /** Validates the arguments as the twin's endpoint validates its request, then calls the service. */
  run(services: ContainerToolServices, principal: Principal, rawArguments: Record<string, unknown> | undefined): Promise<unknown>;
}

export type ToolInputSchema = { type: 'object'; properties?: Record<string, object>; required?: string[]; [key: string]: unknown };

const CONTAINER_ID_SCHEMA = { type: 'string', format: 'uuid', description: 'The container’s id' } as const;
/** The fields of a tool whose twin takes no body or query: none, and any other argument is refused as the twin would a body field. */
const NO_FIELDS = { from: 'body', schema: z.strictObject({}) } as const;

/** The input JSON Schema zod derives from a twin's schema (as the OpenAPI document does), its properties apart. */
function jsonSchemaOf(schema: z.ZodMiniType): { rest: Record<string, unknown>; properties: Record<string, object>; required: string[] } {
  const { $schema: _dialect, properties = {}, required = [], ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  const objects = Object.entries(properties).filter(
    (entry): entry is [string, Exclude<(typeof entry)[1], boolean>] => typeof entry[1] === 'object',
  );
  return { rest, properties: Object.fromEntries(objects), required };
}

const asQueryValue = (value: unknown): unknown => (typeof value === 'number' ? String(value) : value);

function containerTool<Fields extends z.ZodMiniType>(spec: ToolSpec<Fields>): ContainerTool {
  const { fields, containerId: takesId, call, ...described } = spec;
  return {
    ...described,
    inputSchema: () => {
      const base = jsonSchemaOf(fields.schema);
      const properties = { ...(takesId ? { container_id: CONTAINER_ID_SCHEMA } : {}), ...base.properties };
      const required = [...(takesId ? ['container_id'] : []), ...base.required];
      return { ...base.rest, type: 'object', properties, ...(required.length ? { required } : {}) };
    },
    // Body or query first (400 BAD_REQUEST with details), then the id, which names no container unless it is a UUID (404, docs/api-rules.md).
    run: async (services, principal, rawArguments) => {
      const { container_id: containerId, ...rest } = rawArguments ?? {};
      const values =
        fields.from === 'query' ? Object.fromEntries(Object.entries(rest).map(([name, value]) => [name, asQueryValue(value)])) : rest;
      const parsed = parseInput(fields.schema, values, 'arguments');
      if (takesId && (typeof containerId !== 'string' || !isUuid(containerId))) throw new NotFoundError('No container has this id');
      return call(services, principal, { containerId: typeof containerId === 'string' ? containerId : '', fields: parsed });
    },
  };
}

const READ: ToolHints = { readOnlyHint: true, openWorldHint: false };
const write = (hints: Omit<ToolHints, 'readOnlyHint' | 'openWorldHint'>): ToolHints => ({
  readOnlyHint: false,
  openWorldHint: false,
  ...hints,
});

/** A list page as a tool answers it: the items and, when there is more, the cursor of the next page. */
const pageOf = <T>(items: T[], nextCursor: string | undefined) => ({ items, ...(nextCursor ? { next_cursor: nextCursor } : {}) });

/** Every tool of the MCP server, in the order tools/list names them (docs/mcp.md). */
export const CONTAINER_TOOLS: readonly ContainerTool[] = [
  containerTool({
    name: 'list_containers',
    title: 'List containers',
    description:
      'Lists your containers, newest first (every container for an administrator). Pass next_cursor back as cursor for the next page.',
    scope: 'containers:read',
    restTwin: 'listContainers',
    hints: READ,
    fields: { from: 'query', schema: pageQuerySchema },
    call: async ({ containers }, principal, { fields }) => {
      const page = await containers.list(principal, fields);
      return pageOf(page.items.map(containerView), page.nextCursor);
    },
  }),
  containerTool({
    name: 'get_container',
    title: 'Get a container',
    description: "A container's record: its state, what it runs, its size and its URL.",
    scope: 'containers:read',
    restTwin: 'getContainer',
    hints: READ,
    containerId: true,
    fields: NO_FIELDS,
    call: async ({ containers }, principal, { containerId }) => containerView(await containers.get(principal, containerId)),
  }),
  containerTool({
    name: 'create_container',
    title: 'Create a container',
    description:
      "Creates a container and starts its first task. Only hostname is required; the image defaults to the deployment's. The record comes back provisioning; get_container shows when it runs.",
    scope: 'containers:write',
    restTwin: 'createContainer',
    hints: write({ destructiveHint: false, idempotentHint: false }),
    fields: { from: 'body', schema: createContainerBody },
    call: async ({ containers, runPolicy }, principal, { fields }) => {
      runPolicy.assertMayRun(principal);
      return containerView(
        await containers.create(principal, { hostname: fields.hostname, ...workloadFromJson(fields) }, fields.registry_credentials),
      );
    },
  }),
  containerTool({
    name: 'update_container',
    title: 'Change what a container runs',
    description: 'Changes any of the workload fields; the change takes effect at the next start or restart.',
    scope: 'containers:write',
    restTwin: 'updateContainer',
    hints: write({ destructiveHint: false, idempotentHint: true }),
    containerId: true,
    fields: { from: 'body', schema: updateContainerBody },
    call: async ({ containers }, principal, { containerId, fields }) =>
      containerView(await containers.update(principal, containerId, workloadChangesFromJson(fields), fields.registry_credentials)),
  }),
  containerTool({
    name: 'start_container',
    title: 'Start a container',
    description: 'Starts a stopped or failed container on a new task and waits until it runs (up to the start budget).',
    scope: 'containers:write',
    restTwin: 'startContainer',
    hints: write({ destructiveHint: false, idempotentHint: true }),
    containerId: true,
    fields: NO_FIELDS,
    call: async ({ containers, runPolicy }, principal, { containerId }) => {
      runPolicy.assertMayRun(principal);
      return containerView(await containers.start(principal, containerId));
    },
  }),
  containerTool({
    name: 'stop_container',
    title: 'Stop a container',
    description: "Stops the container's task; it stays stopped, and its URL stops answering, until it is started again.",
    scope: 'containers:write',
    restTwin: 'stopContainer',
    hints: write({ destructiveHint: true, idempotentHint: true }),
    containerId: true,
    fields: NO_FIELDS,
    call: async ({ containers }, principal, { containerId }) => containerView(await containers.stop(principal, containerId)),
  }),
  containerTool({
    name: 'restart_container',
    title: 'Restart a container',
    description: 'Runs the container on a new task, then stops the old one, and waits until the new one runs.',
    scope: 'containers:write',
    restTwin: 'restartContainer',
    hints: write({ destructiveHint: false, idempotentHint: false }),
    containerId: true,
    fields: NO_FIELDS,
    call: async ({ containers, runPolicy }, principal, { containerId }) => {
      runPolicy.assertMayRun(principal);
      return containerView(await containers.restart(principal, containerId));
    },
  }),
  containerTool({
    name: 'delete_container',
    title: 'Delete a container',
    description: 'Stops and deletes the container and frees its hostname. This cannot be undone.',
    scope: 'containers:write',
    restTwin: 'deleteContainer',
    hints: write({ destructiveHint: true, idempotentHint: true }),
    containerId: true,
    fields: NO_FIELDS,
    call: async ({ containers }, principal, { containerId }) => {
      await containers.delete(principal, containerId);
      return 'deleted';
    },
  }),
  containerTool({
    name: 'get_container_logs',
    title: "Read a container's logs",
    description: "The container's output, oldest first, across its recent tasks; since keeps the lines after a time.",
    scope: 'containers:read',
    restTwin: 'getContainerLogs',
    hints: READ,
    containerId: true,
    fields: { from: 'query', schema: logsQuerySchema },
    call: async ({ logs }, principal, { containerId, fields }) => {
      const page = await logs.read(principal, containerId, fields);
      return pageOf(page.lines, page.nextCursor);
    },
  }),
  containerTool({
    name: 'get_container_metrics',
    title: "Read a container's metrics",
    description: "The container's current CPU, memory and disk use.",
    scope: 'containers:read',
    restTwin: 'getContainerMetrics',
    hints: READ,
    containerId: true,
    fields: NO_FIELDS,
    call: async ({ containers }, principal, { containerId }) => containers.metrics(principal, containerId),
  }),
  containerTool({
    name: 'get_container_metrics_history',
    title: "Read a container's metrics history",
    description: "The container's CPU, memory and disk use minute by minute, oldest first, over the last minutes (default 60).",
    scope: 'containers:read',
    restTwin: 'getContainerMetricsHistory',
    hints: READ,
    containerId: true,
    fields: { from: 'query', schema: metricsHistoryQuerySchema },
    call: async ({ metricsHistory }, principal, { containerId, fields }) => metricsHistory.read(principal, containerId, fields.minutes),
  }),
];
