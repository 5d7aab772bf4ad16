import { useEffect, useState } from 'preact/hooks';
import { api, fieldErrors } from './api.js';
import type { AppRecord, AuthorizationRecord, RegisteredAppRecord, RotatedAppRecord } from './contract.js';
import { Field, html, when } from './ui.js';

const urisOf = (text: string): string[] =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);

function AppForm(props: {
  idPrefix: string;
  app?: AppRecord;
  submitLabel: string;
  onSubmit: (body: Record<string, unknown>) => Promise<void>;
  onCancel?: () => void;
}) {
  const [name, setName] = useState(props.app?.name ?? '');
  const [description, setDescription] = useState(props.app?.description ?? '');
  const [uris, setUris] = useState((props.app?.redirect_uris ?? []).join('\n'));
  const [grace, setGrace] = useState(props.app?.refresh_reuse_grace_seconds?.toString() ?? '');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      // Blank returns the application to the operator's setting (docs/oauth.md, "Refresh retries").
      const graceField = props.app ? { refresh_reuse_grace_seconds: grace.trim() === '' ? null : Number(grace) } : {};
      await props.onSubmit({ name, description, redirect_uris: urisOf(uris), ...graceField });
      setErrors({});
      if (!props.app) {
        setName('');
        setDescription('');
        setUris('');
      }
    } catch (error) {
      setErrors(fieldErrors(error));
    }
  };
  return html`<form onSubmit=${submit} novalidate>
    ${errors.form ? html`<p class="error" role="alert">${errors.form}</p>` : null}
    <${Field} id=${`${props.idPrefix}-name`} label="Name" value=${name} onInput=${setName} error=${errors.name} required />
    <${Field} id=${`${props.idPrefix}-description`} label="Description" value=${description} onInput=${setDescription} error=${errors.description} />
    <${Field} id=${`${props.idPrefix}-redirect-uris`} label="Redirect URIs" multiline value=${uris} onInput=${setUris} error=${errors.redirect_uris} hint="One per line" />
    ${
      props.app
        ? html`<${Field} id=${`${props.idPrefix}-refresh-grace`} label="Refresh retry grace (seconds)" type="number" step="1" value=${grace} onInput=${setGrace}
            error=${errors.refresh_reuse_grace_seconds} hint="0 to 60; blank: the service's" />`
        : null
    }
    <button type="submit">${props.submitLabel}</button>
    ${props.onCancel ? html`<button type="button" class="secondary" onClick=${props.onCancel}>Cancel</button>` : null}
  </form>`;
}

/** How the list names who stands behind an authorization (docs/oauth.md, "Agents"). */
function origin(authorization: AuthorizationRecord): string {
  switch (authorization.application.kind) {
    case 'metadata_document':
      return `Agent described at ${new URL(authorization.application.client_id).host}; not reviewed by this service`;
    case 'dynamic_registration':
      return 'Agent that registered itself; not reviewed by this service';
    case 'first_party':
      return "This service's command-line client";
    default:
      return 'Application registered on this service';
  }
}

/**
 * What acts for the person: connected agents (a client metadata document, a dynamic registration)
 * and applications they authorized, each revocable at once.
 */
function ConnectedList() {
  const [authorizations, setAuthorizations] = useState<AuthorizationRecord[] | null>(null);
  const [problem, setProblem] = useState('');
  const load = async () => setAuthorizations(await api<AuthorizationRecord[]>('GET', '/api/v1/authorizations?limit=100'));
  useEffect(() => {
    void load();
  }, []);
  const revoke = async (authorization: AuthorizationRecord) => {
    if (!confirm(`Disconnect ${authorization.application.name}? Every token you gave it stops working now.`)) return;
    try {
      await api('DELETE', `/api/v1/authorizations/${encodeURIComponent(authorization.id)}`);
      void load();
    } catch (error) {
      setProblem(error instanceof Error ? error.message : 'Disconnecting failed');
    }
  };
  return html`<section aria-labelledby="connected-heading">
    <h2 id="connected-heading">Connected agents and applications</h2>
    ${problem ? html`<p class="error" role="alert">${problem}</p>` : null}
    ${
      authorizations === null
        ? html`<p>Loading…</p>`
        : authorizations.length === 0
          ? html`<p id="no-connections">Nothing acts for you: no agent or application holds a grant.</p>`
          : html`<ul class="apps" id="connections">${authorizations.map(
              (authorization) => html`<li data-name=${authorization.application.name} data-kind=${authorization.application.kind}>
                <h3>${authorization.application.name}</h3>
                <p class="origin">${origin(authorization)}</p>
                <dl class="facts"><dt>Client ID</dt><dd><code>${authorization.application.client_id}</code></dd>
                  <dt>Scopes</dt><dd>${authorization.scopes.join(', ')}</dd>
                  <dt>Connected</dt><dd>${when(authorization.created_at)}</dd>
                  <dt>Last used</dt><dd>${authorization.last_used_at ? when(authorization.last_used_at) : 'never'}</dd></dl>
                <button type="button" class="danger" aria-label=${`Disconnect ${authorization.application.name}`} onClick=${() => revoke(authorization)}>Disconnect</button>
              </li>`,
            )}</ul>`
    }
  </section>`;
}

/** OAuth applications: the client secret is shown once, at registration and at each rotation. */
export function ApplicationsPage() {
  const [apps, setApps] = useState<AppRecord[] | null>(null);
  const [secret, setSecret] = useState<{ name: string; clientId: string; clientSecret: string } | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [problem, setProblem] = useState('');
  const load = async () => setApps(await api<AppRecord[]>('GET', '/api/v1/oauth/apps?limit=1000'));
  useEffect(() => {
    void load();
  }, []);

  const register = async (body: Record<string, unknown>) => {
    const created = await api<RegisteredAppRecord>('POST', '/api/v1/oauth/apps', body);
    // A public client has no secret to show; the console registers confidential ones.
    if (created.client_secret !== null) setSecret({ name: created.name, clientId: created.client_id, clientSecret: created.client_secret });
    void load();
  };
  const rotate = async (app: AppRecord) => {
    if (!confirm(`Rotate the secret of ${app.name}? The current secret stops working.`)) return;
    try {
      const rotated = await api<RotatedAppRecord>('POST', `/api/v1/oauth/apps/${app.id}/secret`);
      if (rotated.client_secret !== null) setSecret({ name: app.name, clientId: rotated.client_id, clientSecret: rotated.client_secret });
    } catch (error) {
      setProblem(error instanceof Error ? error.message : 'Rotation failed');
    }
  };
  const remove = async (app: AppRecord) => {
    if (!confirm(`Delete ${app.name}? Every token it holds stops working.`)) return;
    try {
      await api('DELETE', `/api/v1/oauth/apps/${app.id}`);
      void load();
    } catch (error) {
      setProblem(error instanceof Error ? error.message : 'Delete failed');
    }
  };

  return html`<section aria-labelledby="apps-heading">
    <h1 id="apps-heading">OAuth applications</h1>
    ${problem ? html`<p class="error" role="alert">${problem}</p>` : null}
    ${
      secret
        ? html`<div class="secret" role="alert" id="issued-secret">
            <p>The client secret of <strong>${secret.name}</strong>. Copy it now: it is shown only once.</p>
            <label for="new-client-id">Client ID</label><input id="new-client-id" readonly value=${secret.clientId} />
            <label for="new-client-secret">Client secret</label><input id="new-client-secret" readonly value=${secret.clientSecret} />
            <button type="button" class="secondary" onClick=${() => setSecret(null)}>Done</button>
          </div>`
        : null
    }
    ${
      apps === null
        ? html`<p>Loading…</p>`
        : apps.length === 0
          ? html`<p id="no-apps">No applications.</p>`
          : html`<ul class="apps" id="apps">${apps.map(
              (app) => html`<li data-name=${app.name}>
                ${
                  editing === app.id
                    ? html`<${AppForm} idPrefix=${`edit-${app.id}`} app=${app} submitLabel="Save"
                        onSubmit=${async (body: Record<string, unknown>) => {
                          await api('PATCH', `/api/v1/oauth/apps/${app.id}`, body);
                          setEditing(null);
                          void load();
                        }}
                        onCancel=${() => setEditing(null)} />`
                    : html`<h2>${app.name}</h2>
                      ${app.description ? html`<p>${app.description}</p>` : null}
                      <dl class="facts"><dt>Client ID</dt><dd><code>${app.client_id}</code></dd>
                        <dt>Redirect URIs</dt><dd>${app.redirect_uris.join(', ')}</dd><dt>Registered</dt><dd>${when(app.created_at)}</dd>
                        <dt>Refresh retry grace</dt><dd class="refresh-grace">${
                          app.refresh_reuse_grace_seconds === null ? "the service's" : `${app.refresh_reuse_grace_seconds} s`
                        }</dd></dl>
                      <button type="button" class="secondary" aria-label=${`Edit ${app.name}`} onClick=${() => setEditing(app.id)}>Edit</button>
                      <button type="button" class="secondary" aria-label=${`Rotate the secret of ${app.name}`} onClick=${() => rotate(app)}>Rotate secret</button>
                      <button type="button" class="danger" aria-label=${`Delete ${app.name}`} onClick=${() => remove(app)}>Delete</button>`
                }
              </li>`,
            )}</ul>`
    }
    <${ConnectedList} />
    <section aria-labelledby="register-heading">
      <h2 id="register-heading">Register an application</h2>
      <${AppForm} idPrefix="register" submitLabel="Register" onSubmit=${register} />
    </section>
  </section>`;
}
