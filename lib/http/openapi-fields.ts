/**
 * The fields of a request body as the OpenAPI document states them (docs/openapi.json), for the
 * clients that render or accept them without a list of their own: the console's container forms
 * and the CLI's create and update flags. A field declared in lib reaches both through the
 * document. It imports nothing, so the browser bundle and the CLI both take it.
 */

/** The part of JSON Schema (2020-12, as zod writes it) that request bodies use. */
export interface JsonSchema {
  type?: string;
  title?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  anyOf?: JsonSchema[];
  enum?: ReadonlyArray<string | number>;
  items?: JsonSchema;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  maxItems?: number;
  /** When a change of the field applies to a running container (lib/containers/schemas.ts). */
  'x-applies-at'?: AppliesAt;
}

/** `once`: the service reads it while the task runs; `next-start`: the next task runs with it. */
export type AppliesAt = 'once' | 'next-start';

/**
 * How a field's value is written: one line of text, a whole or any number, one of a few choices,
 * a list of strings, a map of names to strings, a group of fields of its own, or a list of
 * records (objects of the same fields, such as `mounts: [{ volume, path }]`).
 */
export type FieldKind = 'text' | 'integer' | 'number' | 'choice' | 'list' | 'map' | 'group' | 'records';

export interface BodyField {
  /** Its path in the body, dotted as error details name it: `memory_mb`, `health_check.path`. */
  path: string;
  /** Its own name: `memory_mb`, `path`. */
  name: string;
  /** For a person: the schema's title, else the name in words (`memory_mb`: "Memory (MB)"). */
  label: string;
  description?: string;
  kind: FieldKind;
  required: boolean;
  /** It takes `null` (a PATCH sets it back to the service's own). */
  nullable: boolean;
  default?: unknown;
  choices?: ReadonlyArray<string | number>;
  minimum?: number;
  maximum?: number;
  /** A group's own fields. */
  fields?: BodyField[];
  /** A list of records: the fields of each record, in the document's order (`volume`, `path`). */
  itemFields?: BodyField[];
  /** A list's most items. */
  maxItems?: number;
  /** When a change of it applies to a running container; absent on fields that are not the workload's. */
  appliesAt?: AppliesAt;
}

/** The request bodies of the container endpoints, as both clients are built with them. */
export interface ContainerRequestSchemas {
  /** POST /api/v1/containers. */
  create: JsonSchema;
  /** PATCH /api/v1/containers/{container_id}. */
  update: JsonSchema;
}

type OpenApiDocument = {
  paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: JsonSchema }> } }>>;
};

function jsonBodyOf(document: OpenApiDocument, path: string, method: string): JsonSchema {
  const schema = document.paths[path]?.[method]?.requestBody?.content?.['application/json']?.schema;
  if (!schema?.properties) throw new Error(`The OpenAPI document has no JSON body for ${method.toUpperCase()} ${path}`);
  return schema;
}

/** The container bodies out of the whole document, which the clients need no more of. */
export function containerRequestSchemasOf(document: OpenApiDocument): ContainerRequestSchemas {
  return {
    create: jsonBodyOf(document, '/api/v1/containers', 'post'),
    update: jsonBodyOf(document, '/api/v1/containers/{container_id}', 'patch'),
  };
}

/** Words that read differently from their spelling in a field name. */
const WORDS: Record<string, string> = { cpu: 'CPU', env: 'environment variables', id: 'ID', url: 'URL' };
/** Units at the end of a name, written after the rest: `disk_gb` is "Disk (GB)". */
const UNITS: Record<string, string> = { mb: 'MB', gb: 'GB', s: 's', ms: 'ms' };

/** A field name in words: `memory_mb` is "Memory (MB)", `restart_policy` "Restart policy". */
export function labelOf(name: string): string {
  const words = name.split('_').filter(Boolean);
  const last = words[words.length - 1];
  const unit = words.length > 1 && last !== undefined ? UNITS[last] : undefined;
  const text = (unit ? words.slice(0, -1) : words).map((word) => WORDS[word] ?? word).join(' ');
  const sentence = text.charAt(0).toUpperCase() + text.slice(1);
  return unit ? `${sentence} (${unit})` : sentence;
}

/** The largest integer zod writes for "no upper bound" is no bound a person needs to see. */
const meaningfulMaximum = (maximum: number | undefined) =>
  maximum !== undefined && maximum < Number.MAX_SAFE_INTEGER ? maximum : undefined;

function kindOf(schema: JsonSchema): FieldKind {
  if (schema.enum) return 'choice';
  switch (schema.type) {
    case 'integer':
      return 'integer';
    case 'number':
      return 'number';
    case 'array':
      return schema.items?.type === 'object' && schema.items.properties ? 'records' : 'list';
    case 'object':
      return schema.properties ? 'group' : 'map';
    default:
      return 'text';
  }
}

/** Each property of an object schema as a field, in the document's order; `null` alternatives make it nullable. */
export function bodyFieldsOf(schema: JsonSchema, parent = ''): BodyField[] {
  return Object.entries(schema.properties ?? {}).map(([name, property]) => {
    const alternatives = property.anyOf ?? [property];
    const nullable = alternatives.some((alternative) => alternative.type === 'null');
    const value = alternatives.find((alternative) => alternative.type !== 'null') ?? {};
    const path = parent ? `${parent}.${name}` : name;
    const kind = kindOf(value);
    const field: BodyField = {
      path,
      name,
      label: property.title ?? value.title ?? labelOf(name),
      kind,
      required: schema.required?.includes(name) ?? false,
      nullable,
    };
    const description = property.description ?? value.description;
    if (description) field.description = description;
    if (property['x-applies-at']) field.appliesAt = property['x-applies-at'];
    if (property.default !== undefined) field.default = property.default;
    if (value.enum) field.choices = value.enum;
    if (value.minimum !== undefined) field.minimum = value.minimum;
    const maximum = meaningfulMaximum(value.maximum);
    if (maximum !== undefined) field.maximum = maximum;
    if (kind === 'group') field.fields = bodyFieldsOf(value, path);
    if (kind === 'records') field.itemFields = bodyFieldsOf(value.items!);
    if (value.maxItems !== undefined) field.maxItems = value.maxItems;
    return field;
  });
}

/** The field at a dotted path, looking into groups. */
export function fieldAt(fields: readonly BodyField[], path: string): BodyField | undefined {
  for (const field of fields) {
    if (field.path === path) return field;
    if (field.fields && path.startsWith(`${field.path}.`)) return fieldAt(field.fields, path);
  }
  return undefined;
}

/**
 * A scalar field's value from what a person typed: a number for a number field (the text
 * itself when it is none, so that the API's answer names the field), a choice in its own type.
 * The API validates; this only gives each value its JSON type.
 */
export function valueFromText(field: BodyField, text: string): unknown {
  if (field.kind === 'integer' || field.kind === 'number') return numberOrText(text);
  if (field.kind === 'choice') {
    const choice = field.choices?.find((candidate) => String(candidate) === text);
    return choice ?? text;
  }
  return text;
}

/**
 * One record of a list of records from one line of text, its fields' values in their order joined
 * by `:` (`VOLUME:/path`); the last field takes the rest of the line. The API validates.
 */
export function recordFromText(field: BodyField, text: string): Record<string, unknown> {
  const fields = field.itemFields ?? [];
  const parts = text.split(':');
  return Object.fromEntries(
    fields.map((item, index) => {
      const part = index === fields.length - 1 ? parts.slice(index).join(':') : (parts[index] ?? '');
      return [item.name, valueFromText(item, part)];
    }),
  );
}

/** A record on one line, as `recordFromText` reads it back. */
export const recordText = (field: BodyField, record: Record<string, unknown>): string =>
  (field.itemFields ?? []).map((item) => String(record[item.name] ?? '')).join(':');

/** How a record is written on one line: its fields' names in capitals, joined by `:` (`VOLUME:PATH`). */
export const recordPlaceholder = (field: BodyField): string => (field.itemFields ?? []).map((item) => item.name.toUpperCase()).join(':');

const numberOrText = (text: string): number | string => {
  const trimmed = text.trim();
  const number = Number(trimmed);
  return trimmed !== '' && Number.isFinite(number) ? number : text;
};
