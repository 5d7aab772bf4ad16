import { escapeHtml } from '../http/reply.js';

/**
 * An application's name and description as a third party wrote them, set apart from the service's
 * own wording (RFC 8628 section 5.4): the name quoted on a line of its own, in monospace and a
 * dashed box, between "An application named" and "(not made by this service)", and the
 * description quoted as its own words, so a name or description made to look like the service's
 * (its CLI, a notice) reads as someone else's. Never in a heading nor the title.
 */
export function thirdPartyApp(name: string, description: string): string {
  const named = `<div class="app-named" id="app-named">An application named
<span class="third-party-name">“<span id="app-name">${escapeHtml(name)}</span>”</span>
(not made by this service)</div>`;
  return description
    ? `${named}\n<p class="muted">It describes itself, in its own words, as “<span id="app-description">${escapeHtml(description)}</span>”</p>`
    : named;
}

/** The shell every page shares: no scripts, inline styles only (the CSP allows nothing else). */
export function page(title: string, content: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
  body { font-family: system-ui, sans-serif; background: #f5f6f8; color: #1d2330; margin: 0; }
  main { max-width: 26rem; margin: 4rem auto; background: #fff; padding: 2rem; border-radius: 8px; box-shadow: 0 1px 4px rgba(0,0,0,.12); }
  h1 { font-size: 1.35rem; margin-top: 0; }
  label { display: block; margin: 1rem 0 .25rem; font-weight: 600; }
  input[type=email], input[type=password] { width: 100%; box-sizing: border-box; padding: .55rem; border: 1px solid #b8bfcc; border-radius: 4px; font-size: 1rem; }
  button { margin-top: 1.25rem; padding: .6rem 1.2rem; font-size: 1rem; border-radius: 4px; border: 1px solid #2456c5; background: #2f6ae0; color: #fff; cursor: pointer; }
  button.secondary { background: #fff; color: #2f6ae0; }
  .error { background: #fde8e8; color: #8a1c1c; padding: .6rem .8rem; border-radius: 4px; }
  .warning { background: #fff4d6; color: #5c4300; padding: .6rem .8rem; border-radius: 4px; }
  .muted { color: #5b6475; font-size: .9rem; }
  ul.scopes { padding-left: 1.2rem; }
  .app-named { background: #eef1f6; border-left: 4px solid #5b6475; padding: .6rem .8rem; border-radius: 4px; }
  .third-party-name { display: block; margin: .35rem 0; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; white-space: pre-wrap; overflow-wrap: anywhere; background: #fff; border: 1px dashed #5b6475; border-radius: 3px; padding: .2rem .4rem; }
</style>
</head>
<body><main>${content}</main></body>
</html>`;
}
