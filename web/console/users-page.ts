import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from './api.js';
import type { UserRecord } from './contract.js';
import { html, when } from './ui.js';

/** Every account, for admins: reset a password (a one-time one, shown once), disable, enable. */
export function UsersPage(props: { selfId: string }) {
  const [users, setUsers] = useState<UserRecord[] | null>(null);
  const [error, setError] = useState('');
  const [reset, setReset] = useState<{ email: string; password: string } | null>(null);
  const load = async () => setUsers(await api<UserRecord[]>('GET', '/api/v1/users?limit=1000'));
  useEffect(() => {
    void load();
  }, []);

  const act = async (user: UserRecord, action: 'password-reset' | 'disable' | 'enable') => {
    const questions = {
      'password-reset': `Reset the password of ${user.email}? Their sessions end, and they must choose a new password at their next sign-in.`,
      disable: `Disable ${user.email}? They cannot sign in, and their sessions, tokens and authorized applications stop at once.`,
      enable: `Enable ${user.email} again? They can sign in, and their personal access tokens work again.`,
    };
    if (!confirm(questions[action])) return;
    try {
      const result = await api<{ temporary_password?: string }>('POST', `/api/v1/users/${user.id}/${action}`);
      if (action === 'password-reset' && result.temporary_password) setReset({ email: user.email, password: result.temporary_password });
      setError('');
      void load();
    } catch (failure) {
      setError(failure instanceof ApiError ? failure.message : 'Something went wrong; try again.');
    }
  };

  return html`<section aria-labelledby="users-heading">
    <h1 id="users-heading">Users</h1>
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    ${
      reset
        ? html`<div class="secret" role="alert" id="reset-password">
            <p>The one-time password of <strong>${reset.email}</strong>. Give it to them now: it is shown only once, and they must replace it when they sign in.</p>
            <label for="one-time-password">One-time password</label>
            <input id="one-time-password" readonly value=${reset.password} onFocus=${(event: Event) => (event.target as HTMLInputElement).select()} />
            <button type="button" class="secondary" onClick=${() => setReset(null)}>Done</button>
          </div>`
        : null
    }
    ${
      users === null
        ? html`<p>Loading…</p>`
        : html`<table id="users">
            <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
            <tbody>${users.map(
              (user) => html`<tr data-email=${user.email}>
                <td>${user.email}</td><td>${user.role}</td>
                <td class="status">${user.status === 'disabled' ? 'Disabled' : user.must_change_password ? 'Must set a new password' : 'Active'}</td>
                <td>${when(user.created_at)}</td>
                <td>
                  <button type="button" class="secondary" aria-label=${`Reset the password of ${user.email}`} onClick=${() => act(user, 'password-reset')}>Reset password</button>
                  ${
                    user.id === props.selfId
                      ? null
                      : user.status === 'disabled'
                        ? html`<button type="button" class="secondary" aria-label=${`Enable ${user.email}`} onClick=${() => act(user, 'enable')}>Enable</button>`
                        : html`<button type="button" class="danger" aria-label=${`Disable ${user.email}`} onClick=${() => act(user, 'disable')}>Disable</button>`
                  }
                </td></tr>`,
            )}</tbody>
          </table>`
    }
  </section>`;
}
