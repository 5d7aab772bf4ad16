import { authenticated, revokeAuthorizationAccess, type Route, route, SIGN_IN_MEMORY_MB, signIn } from './route.js';

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
  answers: { data: 'Session' },
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
  answers: { data: 'CurrentSession' },
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
  answers: { acknowledges: 'deleted' },
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
  answers: { data: 'IssuedPersonalAccessToken' },
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
  answers: { page: 'PersonalAccessToken' },
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
  answers: { acknowledges: 'deleted' },
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
  answers: { data: 'User' },
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
  answers: { page: 'User' },
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
  answers: { data: 'Me' },
  summary: 'The calling user',
});

export const changePassword = /* @__PURE__ */ route({
  id: 'changePassword',
  method: 'POST',
  path: '/api/v1/users/me/password',
  handler: 'functions/users/change-password.ts',
  access: 'session',
  body: 'json',
  // The current password is checked (counted like a sign-in), the hash replaced on the email claim
  // and the profile, and the account's other sessions (their entries under the user) deleted.
  permissions: /* @__PURE__ */ authenticated({
    read: ['user', 'email'],
    update: ['email', 'user'],
    write: ['loginFailures', 'credential', 'user'],
  }),
  memoryMb: SIGN_IN_MEMORY_MB,
  rateLimited: true,
  answers: { acknowledges: 'changed' },
  summary: 'Change your own password; signs out your other sessions',
});

export const resetPassword = /* @__PURE__ */ route({
  id: 'resetPassword',
  method: 'POST',
  path: '/api/v1/users/{user_id}/password-reset',
  handler: 'functions/users/reset-password.ts',
  access: 'admin',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ read: ['user', 'email'], update: ['email', 'user'], write: ['credential', 'user'] }),
  memoryMb: SIGN_IN_MEMORY_MB,
  answers: { data: 'PasswordReset' },
  summary: 'Reset a password (admin): a one-time password the person replaces at their next sign-in',
});

export const disableUser = /* @__PURE__ */ route({
  id: 'disableUser',
  method: 'POST',
  path: '/api/v1/users/{user_id}/disable',
  handler: 'functions/users/disable.ts',
  access: 'admin',
  body: 'none',
  // The status on the profile and the email claim; the account's sessions and PAT credentials
  // deleted; its OAuth grants revoked (as a person's own revocation does).
  permissions: /* @__PURE__ */ authenticated({
    read: ['user', 'email', ...(revokeAuthorizationAccess.read ?? [])],
    update: ['email', 'user', ...(revokeAuthorizationAccess.update ?? [])],
    write: ['credential', 'user'],
  }),
  alsoAnswers: [409],
  answers: { data: 'User' },
  summary: 'Disable an account (admin): its sign-in, sessions, tokens and authorizations stop at once',
});

export const enableUser = /* @__PURE__ */ route({
  id: 'enableUser',
  method: 'POST',
  path: '/api/v1/users/{user_id}/enable',
  handler: 'functions/users/enable.ts',
  access: 'admin',
  body: 'none',
  // The status, and the credentials of the account's live PATs written again from their metadata.
  permissions: /* @__PURE__ */ authenticated({ read: ['user', 'email'], update: ['email', 'user'], write: ['credential'] }),
  answers: { data: 'User' },
  summary: 'Enable a disabled account again (admin): its personal access tokens work again',
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
  changePassword,
  resetPassword,
  disableUser,
  enableUser,
] as const satisfies readonly Route[];
