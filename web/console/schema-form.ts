import type { AppliesAt, BodyField } from '../../lib/http/openapi-fields.js';
import { valueFromText } from '../../lib/http/openapi-fields.js';
import { EnvEditor, type EnvRow, envOf, envRowsOf, Field, html } from './ui.js';

/** One record of a list of records as typed: each of its fields' text, by the field's name (`{ volume, path }`). */
export type RecordRow = Record<string, string>;

/**
 * A form drawn from a request body's fields (lib/http/openapi-fields.ts): an input per field in
 * the document's order, so a field the API gains appears with no edit here. What a person typed,
 * by field path: text for a value or a list (one item per line), rows for a map or a list of records.
 */
export type FormState = Record<string, string | EnvRow[] | RecordRow[]>;

/** A value a record's field may take, offered as a choice (a volume of the account's). */
export interface RecordChoice {
  value: string;
  label: string;
  /** Shown but not choosable (a volume another container mounts). */
  disabled?: boolean;
}

/** Choices for the fields of a list's records, by `<list>.<field>` (`mounts.volume`); a field without is typed. */
export type RecordChoices = Readonly<Record<string, readonly RecordChoice[]>>;

/** Every field, groups' own fields included, depth first. */
export const allFields = (fields: readonly BodyField[]): BodyField[] =>
  fields.flatMap((field) => [field, ...allFields(field.fields ?? [])]);

/** The paths a form shows, for `fieldErrors`. */
export const shownPaths = (fields: readonly BodyField[]): string[] => allFields(fields).map((field) => field.path);

const textOf = (value: unknown): string => (value === null || value === undefined ? '' : String(value));

/** An empty form: nothing typed, so the API's defaults apply to all that stays empty. */
export function emptyState(fields: readonly BodyField[]): FormState {
  return Object.fromEntries(allFields(fields).map((field) => [field.path, field.kind === 'map' || field.kind === 'records' ? [] : '']));
}

/** The form filled from a record's values (its fields under the same names). */
export function stateOf(fields: readonly BodyField[], record: Record<string, unknown>): FormState {
  const state: FormState = {};
  for (const field of fields) {
    const value = record[field.name];
    if (field.kind === 'group') Object.assign(state, stateOf(field.fields ?? [], (value ?? {}) as Record<string, unknown>));
    if (field.kind === 'map') state[field.path] = envRowsOf((value ?? {}) as Record<string, string>);
    else if (field.kind === 'list') state[field.path] = ((value ?? []) as unknown[]).map(String).join('\n');
    else if (field.kind === 'records')
      state[field.path] = ((value ?? []) as Array<Record<string, unknown>>).map((item) =>
        Object.fromEntries((field.itemFields ?? []).map((inner) => [inner.name, textOf(item[inner.name])])),
      );
    else if (field.kind !== 'group') state[field.path] = textOf(value);
  }
  return state;
}

/**
 * A field's value from the form. Empty is `absent` on create (the API's default applies) and
 * `null` on a change for a field that takes null (back to the service's own), else absent.
 */
function fieldValue(field: BodyField, state: FormState, empty: 'absent' | 'null'): unknown {
  const cleared = empty === 'null' && field.nullable ? null : undefined;
  switch (field.kind) {
    case 'map': {
      const map = envOf((state[field.path] ?? []) as EnvRow[]);
      return empty === 'absent' && Object.keys(map).length === 0 ? undefined : map;
    }
    case 'list': {
      const items = ((state[field.path] ?? '') as string).split('\n').filter((line) => line !== '');
      return items.length > 0 ? items : cleared;
    }
    case 'records': {
      // A row left wholly empty is no record; on a change, no rows is an empty list (every record removed).
      const items = field.itemFields ?? [];
      const rows = ((state[field.path] ?? []) as RecordRow[]).filter((row) => items.some((item) => (row[item.name] ?? '').trim() !== ''));
      if (rows.length === 0) return empty === 'absent' ? undefined : [];
      return rows.map((row) => Object.fromEntries(items.map((item) => [item.name, valueFromText(item, (row[item.name] ?? '').trim())])));
    }
    case 'group': {
      const children = field.fields ?? [];
      if (children.some((child) => child.required && (state[child.path] ?? '') === '')) return cleared;
      const value = Object.fromEntries(
        children.map((child) => [child.name, fieldValue(child, state, 'absent')]).filter(([, childValue]) => childValue !== undefined),
      );
      return Object.keys(value).length > 0 ? value : cleared;
    }
    default: {
      const text = (state[field.path] ?? '') as string;
      return text === '' ? cleared : valueFromText(field, text);
    }
  }
}

/** The body of a create: each field filled in, and nothing else. */
export function createBodyOf(fields: readonly BodyField[], state: FormState): Record<string, unknown> {
  return Object.fromEntries(
    fields.map((field) => [field.name, fieldValue(field, state, 'absent')]).filter(([, value]) => value !== undefined),
  );
}

/** A stable comparison of JSON values: a group whose values are the record's is no change, whatever its keys' order. */
const sameJson = (a: unknown, b: unknown): boolean => {
  const canonical = (value: unknown): unknown =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(
          Object.entries(value)
            .sort(([x], [y]) => x.localeCompare(y))
            .map(([key, inner]) => [key, canonical(inner)]),
        )
      : value;
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b ?? null));
};

/** The body of a PATCH: the fields whose value differs from the record's. */
export function changesOf(fields: readonly BodyField[], state: FormState, record: Record<string, unknown>): Record<string, unknown> {
  const changes: Record<string, unknown> = {};
  for (const field of fields) {
    const value = fieldValue(field, state, 'null');
    if (value !== undefined && !sameJson(value, record[field.name])) changes[field.name] = value;
  }
  return changes;
}

/** A list's record is named by the list's name in the singular: `Add mount` for `mounts`. */
const singularOf = (name: string): string => (name.endsWith('s') ? name.slice(0, -1) : name).replaceAll('_', ' ');

/** A list of records as rows of inputs (a choice where `choices` has some), each row removable, up to the list's most. */
function RecordsEditor(props: {
  id: string;
  field: BodyField;
  rows: RecordRow[];
  choices: RecordChoices;
  onChange: (rows: RecordRow[]) => void;
  error?: string;
}): unknown {
  const items = props.field.itemFields ?? [];
  const one = singularOf(props.field.name);
  const errorId = `${props.id}-error`;
  const update = (index: number, name: string, value: string) =>
    props.onChange(props.rows.map((row, at) => (at === index ? { ...row, [name]: value } : row)));
  const full = props.field.maxItems !== undefined && props.rows.length >= props.field.maxItems;
  const cell = (row: RecordRow, index: number, item: BodyField) => {
    const id = `${props.id}-${item.name}-${index}`;
    const value = row[item.name] ?? '';
    const choices = props.choices[`${props.field.path}.${item.name}`];
    const onInput = (event: Event) => update(index, item.name, (event.target as HTMLInputElement).value);
    if (!choices)
      return html`<label for=${id}>${item.label}</label><input id=${id} value=${value} placeholder=${item.description} onInput=${onInput} />`;
    // A value the choices lack (one the account can no longer see) stays shown, so saving keeps it.
    const known = value === '' || choices.some((choice) => choice.value === value);
    return html`<label for=${id}>${item.label}</label>
      <select id=${id} value=${value} onChange=${onInput}>
        <option value="">Choose…</option>
        ${known ? null : html`<option value=${value}>${value}</option>`}
        ${choices.map((choice) => html`<option value=${choice.value} disabled=${choice.disabled && choice.value !== value}>${choice.label}</option>`)}
      </select>`;
  };
  return html`<fieldset class="records" id=${props.id} aria-describedby=${props.error ? errorId : undefined}>
    <legend>${props.field.label}</legend>
    ${props.field.description ? html`<div class="hint">${props.field.description}</div>` : null}
    ${props.rows.map(
      (row, index) => html`<div class="record-row" data-index=${index}>
        ${items.map((item) => cell(row, index, item))}
        <button type="button" class="secondary" aria-label=${`Remove ${one} ${index + 1}`} onClick=${() => props.onChange(props.rows.filter((_row, at) => at !== index))}>Remove</button>
      </div>`,
    )}
    <button type="button" class="secondary" disabled=${full} onClick=${() => props.onChange([...props.rows, Object.fromEntries(items.map((item) => [item.name, '']))])}>${`Add ${one}`}</button>
    ${full ? html`<span class="muted"> at most ${props.field.maxItems}</span>` : null}
    ${props.error ? html`<div class="field-error" id=${errorId} role="alert">${props.error}</div>` : null}
  </fieldset>`;
}

const HINTS: Partial<Record<BodyField['kind'], string>> = { list: 'One per line' };

const APPLIES: Record<AppliesAt, string> = {
  once: 'a change applies at once',
  'next-start': 'a change applies from the next start or restart',
};

/** What a settings form says after a save: when each changed field applies, by its label. */
export function savedMessage(fields: readonly BodyField[], changed: readonly string[]): string {
  const labels = (appliesAt: AppliesAt) =>
    fields.filter((field) => changed.includes(field.name) && (field.appliesAt ?? 'next-start') === appliesAt).map((field) => field.label);
  const now = labels('once');
  const later = labels('next-start');
  return [
    'Saved.',
    now.length > 0 ? `${now.join(', ')}: applies at once.` : '',
    later.length > 0 ? `${later.join(', ')}: applies from the next start or restart.` : '',
  ]
    .filter(Boolean)
    .join(' ');
}

/**
 * A field's hint: what the document says of it, how to type it, what empty means and, on a form
 * that changes a container (`withApplies`), when a change applies.
 */
export function hintOf(field: BodyField, withApplies: boolean): string | undefined {
  // A description says what empty means where the service's default is more than "the default".
  const empty = field.nullable && !field.description ? 'leave empty for the service default' : undefined;
  const applies = withApplies && field.appliesAt ? APPLIES[field.appliesAt] : undefined;
  const hint = [field.description, HINTS[field.kind], empty, applies].filter(Boolean).join('; ');
  return hint ? `${hint[0]!.toUpperCase()}${hint.slice(1)}` : undefined;
}

/** The inputs of a form's fields, each with its error beside it. */
export function SchemaFields(props: {
  /** Ids are `<form>-<path>`, e.g. `create-memory_mb`; its error `create-memory_mb-error`. */
  form: string;
  fields: readonly BodyField[];
  state: FormState;
  onChange: (state: FormState) => void;
  errors: Record<string, string>;
  /** Choices for records' fields (`mounts.volume`: the account's volumes). */
  choices?: RecordChoices;
}): unknown {
  const set = (path: string) => (value: string | EnvRow[] | RecordRow[]) => props.onChange({ ...props.state, [path]: value });
  const idOf = (field: BodyField) => `${props.form}-${field.path.replaceAll('.', '-')}`;
  const hint = (field: BodyField) => hintOf(field, props.form === 'settings');
  const placeholderOf = (field: BodyField): string | undefined =>
    field.default !== undefined && field.default !== null && typeof field.default !== 'object' ? String(field.default) : undefined;

  const input = (field: BodyField): unknown => {
    const id = idOf(field);
    const error = props.errors[field.path];
    const hintText = hint(field);
    const describedBy = [hintText ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
    const hintBlock = hintText ? html`<div class="hint" id=${`${id}-hint`}>${hintText}</div>` : null;
    switch (field.kind) {
      case 'group':
        return html`<fieldset id=${id} aria-describedby=${describedBy}>
          <legend>${field.label}</legend>
          ${hintBlock}
          ${error ? html`<div class="field-error" id=${`${id}-error`} role="alert">${error}</div>` : null}
          <div class="grid">${(field.fields ?? []).map(input)}</div>
        </fieldset>`;
      case 'records':
        return html`<${RecordsEditor} id=${id} field=${field} rows=${props.state[field.path] as RecordRow[]} choices=${props.choices ?? {}} onChange=${set(field.path)} error=${error} />`;
      case 'map':
        return html`<${EnvEditor} idBase=${id} legend=${field.label} rows=${props.state[field.path] as EnvRow[]} onChange=${set(field.path)} error=${error} />`;
      case 'choice': {
        const value = props.state[field.path] as string;
        const optional = !field.required && (field.default !== undefined || field.nullable);
        return html`<div class="field"><label for=${id}>${field.label}</label>
          <select id=${id} name=${id} value=${value} aria-invalid=${error ? 'true' : undefined} aria-describedby=${describedBy}
            onChange=${(event: Event) => set(field.path)((event.target as HTMLSelectElement).value)}>
            ${optional ? html`<option value="">${placeholderOf(field) ? `default (${placeholderOf(field)})` : 'none'}</option>` : null}
            ${(field.choices ?? []).map((choice) => html`<option value=${String(choice)}>${String(choice)}</option>`)}
          </select>
          ${hintBlock}
          ${error ? html`<div class="field-error" id=${`${id}-error`} role="alert">${error}</div>` : null}</div>`;
      }
      default:
        return html`<${Field}
          id=${id}
          label=${field.label}
          type=${field.kind === 'integer' || field.kind === 'number' ? 'number' : 'text'}
          multiline=${field.kind === 'list'}
          value=${props.state[field.path] as string}
          onInput=${set(field.path)}
          error=${error}
          required=${field.required}
          placeholder=${placeholderOf(field)}
          hint=${hintText}
        />`;
    }
  };

  // Single values side by side; lists, maps and groups each on a row of their own.
  const single = props.fields.filter((field) => !['list', 'map', 'group', 'records'].includes(field.kind));
  const whole = props.fields.filter((field) => ['list', 'map', 'group', 'records'].includes(field.kind));
  return html`<div class="grid">${single.map(input)}</div>${whole.map(input)}`;
}
