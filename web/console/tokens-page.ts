import { useEffect, useState } from 'preact/hooks';
import { api, fieldErrors } from './api.js';
import type { IssuedTokenRecord, TokenRecord } from './contract.js';
import { Field, html, when } from './ui.js';

/** The scopes a personal access token may hold (lib/identity/principal.ts), with what each allows. */
const SCOPES: ReadonlyArray<{ scope: TokenRecord['scopes'][number]; says: string }> = [
  { scope: 'containers:read', says: 'read your containers, their logs and metrics' },
  { scope: 'containers:write', says: 'create, change, start, stop and delete your containers' },
  { scope: 'account', says: 'everything else you may do: tokens, applications, your account' },
];

/** The new token, shown once, with a button that copies it. */
function IssuedToken(props: { name: string; token: string; onDone: () => void }) {
  const [copied, setCopied] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.token);
      setCopied('Copied to the clipboard.');
    } catch {
      // A browser that refuses the clipboard: the token is selected for the person to copy.
      (document.getElementById('new-token') as HTMLInputElement | null)?.select();
      setCopied('Copying was refused; the token is selected: copy it with Ctrl+C or ⌘C.');
    }
  };
  return html`<div class="secret" role="alert" id="issued-token">
    <p>Your new token <strong>${props.name}</strong>. Copy it now: it is shown only once.</p>
    <label for="new-token">Token</label>
    <input id="new-token" readonly value=${props.token} onFocus=${(event: Event) => (event.target as HTMLInputElement).select()} />
    <button type="button" onClick=${copy}>Copy</button>
    <button type="button" class="secondary" onClick=${props.onDone}>Done</button>
    <span role="status" class="notice" id="copy-status">${copied}</span>
  </div>`;
}

/** Personal access tokens: the new token is shown once, then only its name, scopes and dates. */
export function TokensPage() {
  const [tokens, setTokens] = useState<TokenRecord[] | null>(null);
  const [name, setName] = useState('');
  const [days, setDays] = useState('90');
  const [scopes, setScopes] = useState<ReadonlySet<string>>(new Set(SCOPES.map((one) => one.scope)));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [issued, setIssued] = useState<{ name: string; token: string } | null>(null);
  const load = async () => setTokens(await api<TokenRecord[]>('GET', '/api/v1/tokens?limit=1000'));
  useEffect(() => {
    void load();
  }, []);

  const create = async (event: Event) => {
    event.preventDefault();
    try {
      // An empty box is sent as it is, so the API's own message says what it takes.
      const expires = days.trim() === '' ? undefined : Number(days);
      const created = await api<IssuedTokenRecord>('POST', '/api/v1/tokens', {
        name,
        expires_in_days: Number.isNaN(expires) ? days : expires,
        scopes: SCOPES.map((one) => one.scope).filter((scope) => scopes.has(scope)),
      });
      setIssued({ name: created.name, token: created.token });
      setName('');
      setErrors({});
      void load();
    } catch (error) {
      setErrors(fieldErrors(error));
    }
  };
  const remove = async (token: TokenRecord) => {
    if (!confirm(`Delete the token ${token.name}? Programs using it stop working at once.`)) return;
    await api('DELETE', `/api/v1/tokens/${token.id}`);
    void load();
  };
  const toggle = (scope: string, on: boolean) => {
    const next = new Set(scopes);
    if (on) next.add(scope);
    else next.delete(scope);
    setScopes(next);
  };

  return html`<section aria-labelledby="tokens-heading">
    <h1 id="tokens-heading">Personal access tokens</h1>
    ${issued ? html`<${IssuedToken} name=${issued.name} token=${issued.token} onDone=${() => setIssued(null)} />` : null}
    ${
      tokens === null
        ? html`<p>Loading…</p>`
        : tokens.length === 0
          ? html`<p id="no-tokens">No tokens.</p>`
          : html`<table id="tokens">
              <thead><tr><th scope="col">Name</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
              <tbody>${tokens.map(
                (
                  token,
                ) => html`<tr data-name=${token.name}><td>${token.name}</td><td class="scopes">${token.scopes.join(', ')}</td><td>${when(token.created_at)}</td><td>${when(token.expires_at)}</td><td>${when(token.last_used_at)}</td>
                  <td><button type="button" class="danger" aria-label=${`Delete token ${token.name}`} onClick=${() => remove(token)}>Delete</button></td></tr>`,
              )}</tbody>
            </table>`
    }
    <form onSubmit=${create} novalidate aria-labelledby="new-token-heading">
      <h2 id="new-token-heading">Create a token</h2>
      ${errors.form ? html`<p class="error" role="alert">${errors.form}</p>` : null}
      <div class="grid">
        <${Field} id="token-name" label="Name" value=${name} onInput=${setName} error=${errors.name} required />
        <${Field} id="token-days" label="Expires in (days)" type="number" value=${days} onInput=${setDays} error=${errors.expires_in_days} hint="1 to 365" />
      </div>
      <fieldset id="token-scopes" aria-describedby=${errors.scopes ? 'token-scopes-error' : undefined}>
        <legend>What the token may do</legend>
        ${SCOPES.map(
          (one) => html`<div class="check">
            <input type="checkbox" id=${`scope-${one.scope.replace(':', '-')}`} checked=${scopes.has(one.scope)} onChange=${(event: Event) => toggle(one.scope, (event.target as HTMLInputElement).checked)} />
            <label for=${`scope-${one.scope.replace(':', '-')}`}><code>${one.scope}</code>: ${one.says}</label>
          </div>`,
        )}
        ${errors.scopes ? html`<div class="field-error" id="token-scopes-error" role="alert">${errors.scopes}</div>` : null}
      </fieldset>
      <button type="submit">Create token</button>
    </form>
  </section>`;
}
