import { useState } from 'preact/hooks';
import { api, fieldErrors } from './api.js';
import { Field, html } from './ui.js';

/** The signed-in person's own account: change the password (their other sessions end). */
export function AccountPage(props: { email: string }) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [done, setDone] = useState(false);

  const change = async (event: Event) => {
    event.preventDefault();
    try {
      await api('POST', '/api/v1/users/me/password', { current_password: current, new_password: next });
      setCurrent('');
      setNext('');
      setErrors({});
      setDone(true);
    } catch (error) {
      setDone(false);
      setErrors(fieldErrors(error));
    }
  };

  return html`<section aria-labelledby="account-heading">
    <h1 id="account-heading">Account</h1>
    <p>Signed in as <strong>${props.email}</strong>.</p>
    <form onSubmit=${change} novalidate aria-labelledby="password-heading">
      <h2 id="password-heading">Change your password</h2>
      ${done ? html`<p role="status" id="password-changed">Password changed. Your other sessions are signed out.</p>` : null}
      ${errors.form ? html`<p class="error" role="alert">${errors.form}</p>` : null}
      <${Field} id="current_password" label="Current password" type="password" value=${current} onInput=${setCurrent} error=${errors.current_password} required />
      <${Field} id="new_password" label="New password" type="password" hint="At least 12 characters." value=${next} onInput=${setNext} error=${errors.new_password} required />
      <button type="submit">Change password</button>
    </form>
  </section>`;
}
