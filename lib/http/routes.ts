import { consoleRoutes } from './routes/console.js';
import { containerRoutes } from './routes/containers.js';
import { identityRoutes } from './routes/identity.js';
import { mcpRoutes } from './routes/mcp.js';
import { oauthRoutes } from './routes/oauth.js';
import { pageRoutes } from './routes/pages.js';
import type { Route } from './routes/route.js';
import { volumeRoutes } from './routes/volumes.js';

/**
 * The one route table, declared by area in lib/http/routes/ (identity, containers, oauth, pages, console, mcp; as Hono's `app.route()` groups
 * routes) and assembled here. The CDK stack creates a function and an API Gateway method per
 * row, the local server dispatches on it, and the OpenAPI document is generated from it.
 * Adding an endpoint means adding a row to its area's file and one handler file.
 *
 * A function imports its own row from here (`import * as route from '…/routes.js'`); every row
 * is its own pure export, so its bundle leaves out the other rows and this table.
 */

export type { Access, HttpMethod, Route, RoutePermissions, SuccessResponse } from './routes/route.js';
export * from './routes/console.js';
export * from './routes/containers.js';
export * from './routes/identity.js';
export * from './routes/mcp.js';
export * from './routes/oauth.js';
export * from './routes/pages.js';
export * from './routes/volumes.js';

/** The areas' rows, one after the other; marked pure so a bundle that never reads the table drops it. */
function table<const Areas extends ReadonlyArray<readonly Route[]>>(...areas: Areas): ReadonlyArray<Areas[number][number]> {
  const rows: Array<Areas[number][number]> = [];
  for (const area of areas) rows.push(...area);
  return rows;
}

/** The table: the CDK stack, the local server and the OpenAPI document read it. */
export const routes = /* @__PURE__ */ table(
  identityRoutes,
  containerRoutes,
  volumeRoutes,
  oauthRoutes,
  pageRoutes,
  consoleRoutes,
  mcpRoutes,
);

export type RouteId = (typeof routes)[number]['id'];

export function routeById(id: RouteId): Route {
  const route = routes.find((candidate) => candidate.id === id);
  if (!route) throw new Error(`Unknown route ${id}`);
  return route;
}
