import { useEffect, useState } from 'preact/hooks';
import { api, fieldErrors } from './api.js';
import type { IssuedTokenRecord, TokenRecord } from './contract.js';
import { Field, html, when } from './ui.js';

/** Personal access tokens: the new token is shown once, then only its name and dates. */
export function TokensPage() {
  const [tokens, setTokens] = useState<TokenRecord[] | null>(null);
  const [name, setName] = useState('');
  const [days, setDays] = useState('90');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [issued, setIssued] = useState<{ name: string; token: string } | null>(null);
  const load = async () => setTokens(await api<TokenRecord[]>('GET', '/api/v1/tokens?limit=1000'));
  useEffect(() => {
    void load();
  }, []);

  const create = async (event: Event) => {
    event.preventDefault();
    try {
      const created = await api<IssuedTokenRecord>('POST', '/api/v1/tokens', { name, expires_in_days: Number(days) });
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

  return html`<section aria-labelledby="tokens-heading">
    <h1 id="tokens-heading">Personal access tokens</h1>
    ${
      issued
        ? html`<div class="secret" role="alert" id="issued-token">
            <p>Your new token <strong>${issued.name}</strong>. Copy it now: it is shown only once.</p>
            <label for="new-token">Token</label>
            <input id="new-token" readonly value=${issued.token} onFocus=${(event: Event) => (event.target as HTMLInputElement).select()} />
            <button type="button" class="secondary" onClick=${() => setIssued(null)}>Done</button>
          </div>`
        : null
    }
    ${
      tokens === null
        ? html`<p>Loading…</p>`
        : tokens.length === 0
          ? html`<p id="no-tokens">No tokens.</p>`
          : html`<table id="tokens">
              <thead><tr><th scope="col">Name</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
              <tbody>${tokens.map(
                (
                  token,
                ) => html`<tr data-name=${token.name}><td>${token.name}</td><td>${when(token.created_at)}</td><td>${when(token.expires_at)}</td><td>${when(token.last_used_at)}</td>
                  <td><button type="button" class="danger" aria-label=${`Delete token ${token.name}`} onClick=${() => remove(token)}>Delete</button></td></tr>`,
              )}</tbody>
            </table>`
    }
    <form onSubmit=${create} novalidate aria-labelledby="new-token-heading">
      <h2 id="new-token-heading">Create a token</h2>
      ${errors.form ? html`<p class="error" role="alert">${errors.form}</p>` : null}
      <div class="grid">
        <${Field} id="token-name" label="Name" value=${name} onInput=${setName} error=${errors.name} required />
        <${Field} id="token-days" label="Expires in (days)" type="number" value=${days} onInput=${setDays} error=${errors.expires_in_days} />
      </div>
      <button type="submit">Create token</button>
    </form>
  </section>`;
}
