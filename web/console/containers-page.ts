import { useEffect, useState } from 'preact/hooks';
import { api, base, fieldErrors } from './api.js';
import { commandOf, EnvEditor, type EnvRow, envOf, Field, html, Link, StateBadge, when } from './ui.js';

export interface ContainerRecord {
  id: string;
  hostname: string;
  state: string;
  state_reason?: string | null;
  url: string | null;
  image: string;
  port: number;
  env: Record<string, string>;
  command: string[] | null;
  cpu_cores: number;
  memory_mb: number;
  disk_gb: number;
  created_at: string;
  updated_at: string;
  health_check?: { path: string; interval_s: number; timeout_s: number; grace_s: number } | null;
  restart_policy?: string;
  restart_count?: number;
}

const EMPTY = { hostname: '', image: '', port: '', cpu_cores: '', memory_mb: '', disk_gb: '', command: '' };

/** The create form: only what the person filled in is sent, so the API's defaults apply to the rest. */
function CreateForm(props: { onCreated: (record: ContainerRecord) => void }) {
  const [values, setValues] = useState<Record<string, string>>(EMPTY);
  const [env, setEnv] = useState<EnvRow[]>([]);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const set = (name: string) => (value: string) => setValues({ ...values, [name]: value });

  const submit = async (event: Event) => {
    event.preventDefault();
    const body: Record<string, unknown> = { hostname: values.hostname };
    if (values.image) body.image = values.image;
    for (const name of ['port', 'cpu_cores', 'memory_mb', 'disk_gb']) if (values[name]) body[name] = Number(values[name]);
    if (env.length > 0) body.env = envOf(env);
    const command = commandOf(values.command ?? '');
    if (command) body.command = command;
    setBusy(true);
    try {
      const created = await api<ContainerRecord>('POST', '/api/v1/containers', body);
      setValues(EMPTY);
      setEnv([]);
      setErrors({});
      props.onCreated(created);
    } catch (error) {
      setErrors(fieldErrors(error));
    } finally {
      setBusy(false);
    }
  };

  return html`<form class="create" onSubmit=${submit} novalidate aria-labelledby="create-heading">
    <h2 id="create-heading">Create a container</h2>
    ${errors.form ? html`<p class="error" role="alert">${errors.form}</p>` : null}
    <div class="grid">
      <${Field} id="hostname" label="Hostname" value=${values.hostname} onInput=${set('hostname')} error=${errors.hostname} required hint="Lowercase letters, digits and hyphens" />
      <${Field} id="image" label="Image" value=${values.image} onInput=${set('image')} error=${errors.image} placeholder="the service's default image" />
      <${Field} id="port" label="Port" type="number" value=${values.port} onInput=${set('port')} error=${errors.port} placeholder="8080" />
      <${Field} id="cpu_cores" label="CPU cores" type="number" step="1" value=${values.cpu_cores} onInput=${set('cpu_cores')} error=${errors.cpu_cores} placeholder="1" />
      <${Field} id="memory_mb" label="Memory (MB)" type="number" value=${values.memory_mb} onInput=${set('memory_mb')} error=${errors.memory_mb} placeholder="512" />
      <${Field} id="disk_gb" label="Disk (GB)" type="number" value=${values.disk_gb} onInput=${set('disk_gb')} error=${errors.disk_gb} placeholder="18" />
    </div>
    <${EnvEditor} prefix="create" rows=${env} onChange=${setEnv} error=${errors.env} />
    <${Field} id="command" label="Command" multiline value=${values.command} onInput=${set('command')} error=${errors.command} hint="One argument per line; leave empty to run the image's own command" />
    <button type="submit" disabled=${busy}>${busy ? 'Creating…' : 'Create'}</button>
  </form>`;
}

/** The containers table, refreshed every few seconds so states move by themselves. */
export function ContainersPage() {
  const [containers, setContainers] = useState<ContainerRecord[] | null>(null);
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
  useEffect(() => {
    void load();
    const timer = setInterval(load, 3000);
    return () => clearInterval(timer);
  }, []);

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
              <thead><tr><th scope="col">Hostname</th><th scope="col">State</th><th scope="col">URL</th><th scope="col">Image</th><th scope="col">Created</th></tr></thead>
              <tbody>
                ${containers.map(
                  (container) => html`<tr data-hostname=${container.hostname}>
                    <td><${Link} href=${`${base()}/console/containers/${container.id}`}>${container.hostname}<//></td>
                    <td><${StateBadge} state=${container.state} /></td>
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
