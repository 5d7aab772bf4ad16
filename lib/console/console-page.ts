import { NotFoundError } from '../errors.js';
import type { ApiRequest } from '../http/api-request.js';
import { escapeHtml, html, PAGE_SECURITY_HEADERS, redirect, type Reply } from '../http/reply.js';
import type { ConsoleAssets } from './build-console.js';

export const CONSOLE_PATH = '/console';
const ASSETS_PREFIX = 'assets/';

/**
 * The page headers every other page sends, with the console's scripts, stylesheet and API calls
 * allowed from this origin only; still no inline script and no framing.
 */
export const CONSOLE_PAGE_HEADERS: Record<string, string> = {
  ...PAGE_SECURITY_HEADERS,
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
};

/** The hashed files never change under their name (RFC 8246). */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/** The shell every console URL answers; the script draws the page the path names (client-side routing). */
export function consoleShell(basePath: string, assets: Pick<ConsoleAssets, 'script' | 'stylesheet'>): string {
  const assetsUrl = `${basePath}${CONSOLE_PATH}/${ASSETS_PREFIX}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Console</title>
<link rel="stylesheet" href="${escapeHtml(assetsUrl + assets.stylesheet)}">
<script type="module" src="${escapeHtml(assetsUrl + assets.script)}"></script>
</head>
<body><div id="app" data-base="${escapeHtml(basePath)}"><p>Loading the console…</p></div>
<noscript><p>The console needs JavaScript. The API works without it.</p></noscript></body>
</html>`;
}

/**
 * GET /console and /console/{path+}: a hashed asset under `assets/`, else the page shell for a
 * signed-in person; without a session the browser signs in first and comes back to this URL.
 */
export function serveConsole(request: ApiRequest, assets: ConsoleAssets): Reply {
  const path = request.params.path ?? '';
  if (path.startsWith(ASSETS_PREFIX)) {
    const file = assets.files[path.slice(ASSETS_PREFIX.length)];
    if (!file) throw new NotFoundError('No such console file');
    return { statusCode: 200, headers: { 'Content-Type': file.contentType, 'Cache-Control': IMMUTABLE }, body: file.body };
  }
  if (request.principal?.kind !== 'session') {
    const query = new URLSearchParams(request.query).toString();
    const here = `${CONSOLE_PATH}${path ? `/${path}` : ''}${query ? `?${query}` : ''}`;
    return redirect(`${request.basePath}/login?next=${encodeURIComponent(here)}`);
  }
  return html(200, consoleShell(request.basePath, assets), CONSOLE_PAGE_HEADERS);
}

/** GET /console: on to the containers page, through sign-in when there is no session. */
export function consoleHome(request: ApiRequest): Reply {
  if (request.principal?.kind !== 'session') return redirect(`${request.basePath}/login?next=${encodeURIComponent(CONSOLE_PATH)}`);
  return redirect(`${request.basePath}${CONSOLE_PATH}/containers`);
}
