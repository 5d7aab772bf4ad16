import { useEffect, useState } from 'preact/hooks';
import { api, base, fieldErrors } from './api.js';
import { type ContainerRecord, CREATE_FIELDS, type UserRecord } from './contract.js';
import { createBodyOf, emptyState, type FormState, SchemaFields, shownPaths } from './schema-form.js';
import { html, Link, StateBadge, when } from './ui.js';
import { useVolumeChoices } from './volume-choices.js';

/** The create form, drawn from the create body's fields: only what the person filled in is sent, so the API's defaults apply to the rest. */
function CreateForm(props: { onCreated: (record: ContainerRecord) => void }) {
  const [state, setState] = useState<FormState>(emptyState(CREATE_FIELDS));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const choices = useVolumeChoices();

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      const created = await api<ContainerRecord>('POST', '/api/v1/containers', createBodyOf(CREATE_FIELDS, state));
      setState(emptyState(CREATE_FIELDS));
      setErrors({});
      props.onCreated(created);
    } catch (error) {
      setErrors(fieldErrors(error, shownPaths(CREATE_FIELDS)));
    } finally {
      setBusy(false);
    }
  };

  return html`<form class="create" onSubmit=${submit} novalidate aria-labelledby="create-heading">
    <h2 id="create-heading">Create a container</h2>
    ${errors.form ? html`<p class="error" role="alert">${errors.form}</p>` : null}
    <${SchemaFields} form="create" fields=${CREATE_FIELDS} state=${state} onChange=${setState} errors=${errors} choices=${choices} />
    <button type="submit" disabled=${busy}>${busy ? 'Creating…' : 'Create'}</button>
  </form>`;
}

/**
 * The containers table, refreshed every few seconds so states move by themselves. An admin sees
 * every account's containers, so their table names each one's owner.
 */
export function ContainersPage(props: { admin: boolean }) {
  const [containers, setContainers] = useState<ContainerRecord[] | null>(null);
  const [owners, setOwners] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState('');
  const [notice, setNotice] = useState('');

  const load = async () => {
    try {
      setContainers(await api<ContainerRecord[]>('GET', '/api/v1/containers?limit=1000'));
      setProblem('');
    } catch (error) {
      setProblem(error instanceof Error ? error.message : 'The list could not be loaded');
    }
  };
  const loadOwners = async () => {
    try {
      const users = await api<UserRecord[]>('GET', '/api/v1/users?limit=1000');
      setOwners(Object.fromEntries(users.map((user) => [user.id, user.email])));
    } catch {
      // Without the names the column shows each owner's id.
    }
  };
  useEffect(() => {
    void load();
    const timer = setInterval(load, 3000);
    return () => clearInterval(timer);
  }, []);
  useEffect(() => {
    if (props.admin) void loadOwners();
  }, [props.admin]);

  return html`<section aria-labelledby="containers-heading">
    <h1 id="containers-heading">Containers</h1>
    ${problem ? html`<p class="error" role="alert">${problem}</p>` : null}
    <p role="status" class="notice">${notice}</p>
    ${
      containers === null
        ? html`<p>Loading…</p>`
        : containers.length === 0
          ? html`<p id="no-containers">No containers yet. Create one below.</p>`
          : html`<table id="containers">
              <thead><tr><th scope="col">Hostname</th>${props.admin ? html`<th scope="col">Owner</th>` : null}<th scope="col">State</th><th scope="col">URL</th><th scope="col">Image</th><th scope="col">Created</th></tr></thead>
              <tbody>
                ${containers.map(
                  (container) => html`<tr data-hostname=${container.hostname}>
                    <td><${Link} href=${`${base()}/console/containers/${container.id}`}>${container.hostname}<//></td>
                    ${props.admin ? html`<td class="owner">${owners[container.user_id] ?? container.user_id}</td>` : null}
                    <td><${StateBadge} container=${container} /></td>
                    <td>${container.url ? html`<a href=${container.url} target="_blank" rel="noopener noreferrer">${container.url}</a>` : '—'}</td>
                    <td>${container.image}</td>
                    <td>${when(container.created_at)}</td>
                  </tr>`,
                )}
              </tbody>
            </table>`
    }
    <${CreateForm}
      onCreated=${(created: ContainerRecord) => {
        setNotice(`Created ${created.hostname}; it is starting.`);
        void load();
      }}
    />
  </section>`;
}
