import { type Command, Option } from 'commander';
import type { BodyField } from '../../lib/http/openapi-fields.js';
import { recordFromText, recordPlaceholder, recordText, valueFromText } from '../../lib/http/openapi-fields.js';
import type { FieldProblem } from '../../lib/http/api-types.js';
import { CliError, EXIT } from './errors.js';

/**
 * The container fields as command-line options, from the request bodies of the OpenAPI document
 * (cli/src/contract.ts): a field the API gains is a flag of `create` and `update`, and a line of
 * `get`, with no edit here. A group's fields are flags of their own (`--health-check-path`).
 */

/** Units a flag leaves out, said in its description instead: `--memory`, not `--memory-mb`. */
const UNIT_WORDS = new Set(['mb', 'gb', 's', 'cores']);

const kebab = (path: string) => path.replaceAll('.', '-').replaceAll('_', '-');

/** A list of records takes one record per flag, so its flag is the singular: `--mount` for `mounts`. */
const singular = (path: string) => (path.endsWith('s') && !path.includes('.') ? path.slice(0, -1) : path);

function shortFlagOf(path: string, kind?: BodyField['kind']): string {
  if (kind === 'records') return kebab(singular(path));
  const words = path.split(/[._]/);
  const last = words[words.length - 1]!;
  return words.length > 1 && UNIT_WORDS.has(last) ? words.slice(0, -1).join('-') : kebab(path);
}

/** The fields that take a value of their own: a group stands for its fields. */
export const leafFields = (fields: readonly BodyField[]): BodyField[] =>
  fields.flatMap((field) => (field.kind === 'group' ? leafFields(field.fields ?? []) : [field]));

/** Each field's flag name (without `--`), its unit left out unless two fields would then share one. */
export function flagNames(fields: readonly BodyField[]): Map<string, string> {
  const leaves = leafFields(fields);
  const short = leaves.map((field) => shortFlagOf(field.path, field.kind));
  return new Map(
    leaves.map((field, index) => [
      field.path,
      short.indexOf(short[index]!) === short.lastIndexOf(short[index]!) ? short[index]! : kebab(field.path),
    ]),
  );
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** A leaf's words: its label, under its group's (`Health check: interval (s)`), its bounds and default. */
function describe(field: BodyField, groups: ReadonlyMap<string, BodyField>): string {
  const group = groups.get(field.path.slice(0, field.path.lastIndexOf('.')));
  const parts = [group ? `${group.label}: ${field.label.charAt(0).toLowerCase()}${field.label.slice(1)}` : field.label];
  if (field.choices) {
    // commander lists the choices itself.
  } else if (field.minimum !== undefined && field.maximum !== undefined) parts.push(`${field.minimum} to ${field.maximum}`);
  else if (field.minimum !== undefined) parts.push(`at least ${field.minimum}`);
  if (field.kind === 'map') parts.push('NAME=VALUE, repeatable');
  if (field.kind === 'list') parts.push('repeatable');
  if (field.kind === 'records')
    parts.push(`${recordPlaceholder(field)}, repeatable${field.maxItems ? ` up to ${field.maxItems} times` : ''}`);
  if (field.nullable && (field.kind === 'integer' || field.kind === 'number')) parts.push('"never" for none');
  if (field.description) parts.push(field.description);
  const fallback = field.default;
  if (fallback !== undefined && fallback !== null && typeof fallback !== 'object') parts.push(`default ${fallback}`);
  return parts.join('; ');
}

/** Words a nullable number flag takes for `null` (`--idle-timeout never`: back to the service's own). */
const NULL_WORDS = new Set(['never', 'none', 'null']);
const NULL_WORD = 'never';

/** A number flag's value: a usage error (exit 2) when it is none; its rules are the API's to check. */
const numberOf = (flag: string, nullable: boolean) => (text: string) => {
  // Commander keeps no null from a parser: the word goes on, and valueOfOption makes it null.
  if (nullable && NULL_WORDS.has(text.trim().toLowerCase())) return NULL_WORD;
  const number = Number(text);
  if (text.trim() === '' || !Number.isFinite(number))
    throw new CliError(`--${flag} must be a number, got "${text}"`, { exitCode: EXIT.usage });
  return number;
};

/** Adds a flag per field to a command (those in `skip` are taken otherwise, e.g. as arguments). */
export function addFieldOptions(command: Command, fields: readonly BodyField[], skip: readonly string[] = []): Command {
  const flags = flagNames(fields);
  const groups = new Map(fields.filter((field) => field.kind === 'group').map((field) => [field.path, field]));
  for (const field of leafFields(fields)) {
    if (skip.includes(field.path)) continue;
    const flag = flags.get(field.path)!;
    const placeholder =
      field.kind === 'map'
        ? 'NAME=VALUE'
        : field.kind === 'records'
          ? recordPlaceholder(field)
          : field.kind === 'integer' || field.kind === 'number'
            ? 'n'
            : 'value';
    const option = new Option(`--${flag} <${placeholder}>`, describe(field, groups));
    if (field.kind === 'choice') option.choices((field.choices ?? []).map(String));
    else if (field.kind === 'integer' || field.kind === 'number') option.argParser(numberOf(flag, field.nullable));
    else if (field.kind === 'list' || field.kind === 'map' || field.kind === 'records') option.argParser(collect);
    command.addOption(option);
  }
  return command;
}

/** `NAME=VALUE`, as a map flag and `env set` take it. */
export function namedValue(pair: string): [string, string] {
  const equals = pair.indexOf('=');
  if (equals <= 0) throw new CliError(`Expected NAME=VALUE, got "${pair}"`, { exitCode: EXIT.usage });
  return [pair.slice(0, equals), pair.slice(equals + 1)];
}

const attributeOf = (flag: string) => flag.replace(/-([a-z])/g, (_match, letter: string) => letter.toUpperCase());

function valueOfOption(field: BodyField, given: unknown): unknown {
  if (field.kind === 'map') return Object.fromEntries((given as string[]).map(namedValue));
  // `--mount none` empties the list (a PATCH that removes every record).
  if (field.kind === 'records') {
    const lines = given as string[];
    return lines.length === 1 && NULL_WORDS.has(lines[0]!.trim().toLowerCase()) ? [] : lines.map((line) => recordFromText(field, line));
  }
  if (field.kind === 'choice') return valueFromText(field, given as string);
  if (field.nullable && given === NULL_WORD) return null;
  return given;
}

/**
 * The body the flags given make: each field whose flag was given, a group from its fields'
 * flags laid over `current` (the record's group, so that `update --health-check-interval 5`
 * keeps the path).
 */
export function bodyFromOptions(
  fields: readonly BodyField[],
  options: Record<string, unknown>,
  current: Record<string, unknown> = {},
): Record<string, unknown> {
  const flags = flagNames(fields);
  const body: Record<string, unknown> = {};
  for (const field of fields) {
    if (field.kind === 'group') {
      const inner = bodyFromOptions(field.fields ?? [], options, {});
      if (Object.keys(inner).length > 0) body[field.name] = { ...((current[field.name] as object | null) ?? {}), ...inner };
      continue;
    }
    const given = options[attributeOf(flags.get(field.path)!)];
    if (given !== undefined) body[field.name] = valueOfOption(field, given);
  }
  return body;
}

/** A value on one line: a map as NAME=VALUE pairs, a list by spaces, a group as its fields, nothing as `-`. */
export function formatValue(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (Array.isArray(value)) return value.length ? value.join(' ') : '-';
  if (typeof value === 'object') {
    const entries = Object.entries(value);
    return entries.length ? entries.map(([name, inner]) => `${name}=${inner}`).join(' ') : '-';
  }
  return String(value);
}

/** A record's value of each field, as `get` prints them; a list of records as the lines its flag takes (`VOLUME:/path`). */
export const fieldRows = (fields: readonly BodyField[], record: Record<string, unknown>): Array<[string, string]> =>
  fields.map((field) => {
    const value = record[field.name];
    if (field.kind === 'records' && Array.isArray(value)) {
      return [field.name, value.length ? value.map((item) => recordText(field, item as Record<string, unknown>)).join(' ') : '-'];
    }
    return [field.name, formatValue(value)];
  });

/** An API's field problems in the CLI's words: each field by the flag that sets it (an argument by its name). */
export function problemsText(
  problems: readonly FieldProblem[],
  fields: readonly BodyField[],
  argumentFields: readonly string[] = [],
): string {
  const flags = flagNames(fields);
  return problems
    .map((problem) => {
      const flag = argumentFields.includes(problem.field) ? undefined : flags.get(problem.field);
      return `${flag ? `--${flag}` : problem.field}: ${problem.message}`;
    })
    .join('; ');
}
