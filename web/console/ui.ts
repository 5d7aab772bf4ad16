import { h } from 'preact';
import htm from 'htm';

export const html = htm.bind(h);

/** A labelled input with its error beside it; the error is tied to the input for screen readers. */
export function Field(props: {
  id: string;
  label: string;
  error?: string;
  hint?: string;
  children?: unknown;
  type?: string;
  value?: string;
  onInput?: (value: string) => void;
  multiline?: boolean;
  required?: boolean;
  placeholder?: string;
  step?: string;
}) {
  const errorId = `${props.id}-error`;
  const hintId = `${props.id}-hint`;
  const describedBy = [props.hint ? hintId : '', props.error ? errorId : ''].filter(Boolean).join(' ') || undefined;
  const common = {
    id: props.id,
    name: props.id,
    value: props.value ?? '',
    'aria-invalid': props.error ? 'true' : undefined,
    'aria-describedby': describedBy,
    required: props.required,
    placeholder: props.placeholder,
    onInput: (event: Event) => props.onInput?.((event.target as HTMLInputElement).value),
  };
  return html`<div class="field">
    <label for=${props.id}>${props.label}</label>
    ${props.multiline ? html`<textarea rows="3" ...${common}></textarea>` : html`<input type=${props.type ?? 'text'} step=${props.step} ...${common} />`}
    ${props.hint ? html`<div class="hint" id=${hintId}>${props.hint}</div>` : null}
    ${props.error ? html`<div class="field-error" id=${errorId} role="alert">${props.error}</div>` : null}
  </div>`;
}

export interface EnvRow {
  name: string;
  value: string;
}

/** A map of names to strings (environment variables) as name/value rows, each input labelled; ids start with `idBase`. */
export function EnvEditor(props: { idBase: string; legend: string; rows: EnvRow[]; onChange: (rows: EnvRow[]) => void; error?: string }) {
  const update = (index: number, change: Partial<EnvRow>) =>
    props.onChange(props.rows.map((row, at) => (at === index ? { ...row, ...change } : row)));
  const errorId = `${props.idBase}-error`;
  return html`<fieldset class="env" aria-describedby=${props.error ? errorId : undefined}>
    <legend>${props.legend}</legend>
    ${props.rows.map(
      (row, index) => html`<div class="env-row">
        <label for=${`${props.idBase}-name-${index}`}>Name</label>
        <input id=${`${props.idBase}-name-${index}`} value=${row.name} onInput=${(event: Event) => update(index, { name: (event.target as HTMLInputElement).value })} />
        <label for=${`${props.idBase}-value-${index}`}>Value</label>
        <input id=${`${props.idBase}-value-${index}`} value=${row.value} onInput=${(event: Event) => update(index, { value: (event.target as HTMLInputElement).value })} />
        <button type="button" class="secondary" aria-label=${`Remove variable ${row.name || index + 1}`} onClick=${() => props.onChange(props.rows.filter((_row, at) => at !== index))}>Remove</button>
      </div>`,
    )}
    <button type="button" class="secondary" onClick=${() => props.onChange([...props.rows, { name: '', value: '' }])}>Add variable</button>
    ${props.error ? html`<div class="field-error" id=${errorId} role="alert">${props.error}</div>` : null}
  </fieldset>`;
}

export const envRowsOf = (env: Record<string, string>): EnvRow[] => Object.entries(env).map(([name, value]) => ({ name, value }));
export const envOf = (rows: EnvRow[]): Record<string, string> =>
  Object.fromEntries(rows.filter((row) => row.name.trim() !== '').map((row) => [row.name.trim(), row.value]));

/** A container stopped by its idle timeout (lib/containers/container-core.ts, STATE_REASON.idle): its next request wakes it. */
export const isAsleep = (container: { state: string; state_reason: string | null }): boolean =>
  container.state === 'stopped' && container.state_reason === 'idle';

/** A state in words, with a mark, so it reads without colour; a container asleep reads "sleeping", not "stopped". */
export function StateBadge(props: { container: { state: string; state_reason: string | null } }) {
  const shown = isAsleep(props.container) ? 'sleeping' : props.container.state;
  const marks: Record<string, string> = { running: '●', provisioning: '◌', stopped: '■', sleeping: '☾', failed: '✕' };
  return html`<span class=${`state state-${shown}`}><span aria-hidden="true">${marks[shown] ?? '?'} </span>${shown}</span>`;
}

export const when = (iso: string | null | undefined): string => (iso ? new Date(iso).toLocaleString() : '—');

/** Navigation inside the console without reloading: the router listens for this. */
export function navigate(path: string): void {
  history.pushState(null, '', path);
  dispatchEvent(new PopStateEvent('popstate'));
}

/** A link that routes in the page (a plain link still works when opened in a new tab). */
export function Link(props: { href: string; children?: unknown; class?: string }) {
  const onClick = (event: MouseEvent) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(props.href);
  };
  return html`<a href=${props.href} class=${props.class} onClick=${onClick}>${props.children}</a>`;
}
