import { describe, expect, it } from 'vitest';
import { consentPage, type ConsentView } from '../../../lib/pages/consent-page.js';

const view = (appName: string, appDescription = ''): ConsentView => ({
  action: '/oauth/consent',
  csrfToken: 'csrf',
  requestId: 'request',
  appName,
  appDescription,
  redirectHost: 'dashboard.example',
  scopes: ['containers:read'],
  userEmail: 'person@example.com',
});

const textOf = (html: string | undefined) =>
  html
    ?.replace(/<[^>]+>/g, '')
    .replace(/\s+/g, ' ')
    .trim();

describe('consentPage', () => {
  // A name taken before the look-alike rule, or one it misses, must still read as a third party's words.
  it.each([
    ['Fleet Dashboard', 'Fleet Dashboard'],
    ['container-hosting CLI', 'container-hosting CLI'],
    ['Sign in to container-hosting <b>now</b>', 'Sign in to container-hosting &lt;b&gt;now&lt;/b&gt;'],
  ])('quotes the application name %j in a box of its own, never in the heading or the title', (appName, escaped) => {
    // Act
    const html = consentPage(view(appName));
    // Assess
    expect(html).toContain('<title>Authorize an application not made by this service</title>');
    expect(html).toContain('<h1>Authorize an application not made by this service?</h1>');
    expect(textOf(/<div class="app-named" id="app-named">([\s\S]*?)<\/div>/.exec(html)?.[1])).toBe(
      `An application named “${escaped}” (not made by this service)`,
    );
    expect(html).toContain(`<span class="third-party-name">“<span id="app-name">${escaped}</span>”</span>`);
    expect(html.split(escaped)).toHaveLength(2);
  });

  it('quotes the description as the application’s own words', () => {
    const html = consentPage(view('Helper', "This is this service's own CLI."));
    expect(textOf(/<p class="muted">(It describes itself[\s\S]*?)<\/p>/.exec(html)?.[1])).toBe(
      'It describes itself, in its own words, as “This is this service&#39;s own CLI.”',
    );
  });
});
