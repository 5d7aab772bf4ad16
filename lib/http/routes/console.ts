import { authenticated, type Route, route } from './route.js';

export const consoleHome = /* @__PURE__ */ route({
  id: 'consoleHome',
  method: 'GET',
  path: '/console',
  handler: 'functions/console/home.ts',
  access: 'browser',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated(),
  answers: { redirects: [302] },
  summary: 'The console: sends the browser to its containers page (or to sign in first)',
});

export const consoleApp = /* @__PURE__ */ route({
  id: 'consoleApp',
  method: 'GET',
  path: '/console/{path+}',
  handler: 'functions/console/page.ts',
  access: 'browser',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated(),
  answers: { console: true },
  summary: "The console's pages (one shell; the script routes) and its hashed, immutable files under /console/assets/",
});

/** This area's rows, in the order the table lists them. */
export const consoleRoutes = [consoleHome, consoleApp] as const satisfies readonly Route[];
