import { authenticated, type Route, route, SIGN_IN_MEMORY_MB, signIn } from './route.js';

/** Sessions, personal access tokens and users (functions/sessions, functions/tokens, functions/users). */
export const createSession = /* @__PURE__ */ route({
  id: 'createSession',
  method: 'POST',
  path: '/api/v1/sessions',
  handler: 'functions/sessions/create.ts',
  access: 'public',
  body: 'json',
  // The key that signs device cookies (lib/wiring/sign-in.ts).
  permissions: { table: signIn, refreshGraceKey: true },
  memoryMb: SIGN_IN_MEMORY_MB,
  rateLimited: true,
  summary: 'Sign in with email and password',
});

export const getCurrentSession = /* @__PURE__ */ route({
  id: 'getCurrentSession',
  method: 'GET',
  path: '/api/v1/sessions/current',
  handler: 'functions/sessions/get-current.ts',
  access: 'session',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ read: ['user'] }),
  summary: 'The current session, with its CSRF token',
});

export const deleteCurrentSession = /* @__PURE__ */ route({
  id: 'deleteCurrentSession',
  method: 'DELETE',
  path: '/api/v1/sessions/current',
  handler: 'functions/sessions/delete-current.ts',
  access: 'session',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ write: ['credential'] }),
  summary: 'Sign out',
});

export const createToken = /* @__PURE__ */ route({
  id: 'createToken',
  method: 'POST',
  path: '/api/v1/tokens',
  handler: 'functions/tokens/create.ts',
  access: 'account',
  body: 'json',
  permissions: /* @__PURE__ */ authenticated({ write: ['user', 'credential'] }),
  summary: 'Create a personal access token',
});

export const listTokens = /* @__PURE__ */ route({
  id: 'listTokens',
  method: 'GET',
  path: '/api/v1/tokens',
  handler: 'functions/tokens/list.ts',
  access: 'account',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ read: ['user'] }),
  summary: "List the caller's personal access tokens",
});

export const deleteToken = /* @__PURE__ */ route({
  id: 'deleteToken',
  method: 'DELETE',
  path: '/api/v1/tokens/{token_id}',
  handler: 'functions/tokens/delete.ts',
  access: 'account',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ write: ['user', 'credential'] }),
  summary: 'Revoke a personal access token',
});

export const createUser = /* @__PURE__ */ route({
  id: 'createUser',
  method: 'POST',
  path: '/api/v1/users',
  handler: 'functions/users/create.ts',
  access: 'admin',
  body: 'json',
  permissions: /* @__PURE__ */ authenticated({ write: ['user', 'email'] }),
  alsoAnswers: [409],
  summary: 'Create a user (admin)',
});

export const listUsers = /* @__PURE__ */ route({
  id: 'listUsers',
  method: 'GET',
  path: '/api/v1/users',
  handler: 'functions/users/list.ts',
  access: 'admin',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ read: ['allUsers'] }),
  summary: 'List users (admin)',
});

export const getMe = /* @__PURE__ */ route({
  id: 'getMe',
  method: 'GET',
  path: '/api/v1/users/me',
  handler: 'functions/users/me.ts',
  access: 'api',
  body: 'none',
  // The profile and the quota usage item, both in the user's partition.
  permissions: /* @__PURE__ */ authenticated({ read: ['user'] }),
  summary: 'The calling user',
});

/** This area's rows, in the order the table lists them. */
export const identityRoutes = [
  createSession,
  getCurrentSession,
  deleteCurrentSession,
  createToken,
  listTokens,
  deleteToken,
  createUser,
  listUsers,
  getMe,
] as const satisfies readonly Route[];
