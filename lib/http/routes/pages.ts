import type { TableAccess } from '../../table-access.js';
import { tableAccess } from '../../table-access.js';
import { authenticated, authorizedApps, revokeAuthorizationAccess, type Route, route, SIGN_IN_MEMORY_MB, signIn } from './route.js';

/** Server-rendered HTML pages and their form submissions: sign-in, consent, device, authorized applications (functions/pages). */

/**
 * Consent: the pending request, the application and client, the user's grants for the client
 * (remembered consent), and issuing a code, whose index entry lives in the application's partition.
 */
const consent: TableAccess = {
  read: ['authorizationRequest', 'oauthApp', 'oauthClient', 'user', 'grantsOfUser', 'grant'],
  // `oauthClient`: an approval keeps an unused registration for good (its TTL is removed).
  update: ['oauthClient'],
  write: ['authorizationRequest', 'authorizationCode', 'oauthApp'],
};

export const loginPage = /* @__PURE__ */ route({
  id: 'loginPage',
  method: 'GET',
  path: '/login',
  handler: 'functions/pages/login-form.ts',
  access: 'browser',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated({ read: ['user'] }),
  answers: { html: true, redirects: [303] },
  summary: 'Sign-in page',
});

export const loginSubmit = /* @__PURE__ */ route({
  id: 'loginSubmit',
  method: 'POST',
  path: '/login',
  handler: 'functions/pages/login-submit.ts',
  access: 'public',
  body: 'form',
  // The key that signs device cookies (lib/wiring/sign-in.ts).
  permissions: { table: signIn, refreshGraceKey: true },
  memoryMb: SIGN_IN_MEMORY_MB,
  rateLimited: true,
  answers: { html: true, redirects: [303] },
  summary: 'Sign-in form submission',
});

export const consentPage = /* @__PURE__ */ route({
  id: 'consentPage',
  method: 'GET',
  path: '/oauth/consent',
  handler: 'functions/pages/consent-form.ts',
  access: 'browser',
  body: 'none',
  alsoAnswers: [400],
  // Writes when the user's consent is remembered: the code is issued without the page.
  permissions: /* @__PURE__ */ authenticated(consent),
  errorPage: 'Authorization failed',
  answers: { html: true, redirects: [302, 303] },
  summary: 'Consent page: approve or deny an application (approved at once when consent is remembered)',
});

export const consentDecision = /* @__PURE__ */ route({
  id: 'consentDecision',
  method: 'POST',
  path: '/oauth/consent',
  handler: 'functions/pages/consent-decision.ts',
  access: 'session',
  body: 'form',
  permissions: /* @__PURE__ */ authenticated(consent),
  errorPage: 'Authorization failed',
  answers: { html: true, redirects: [302, 303] },
  summary: 'Consent form submission',
});

export const devicePage = /* @__PURE__ */ route({
  id: 'devicePage',
  method: 'GET',
  path: '/device',
  handler: 'functions/pages/device-page.ts',
  access: 'browser',
  body: 'none',
  alsoAnswers: [400],
  permissions: /* @__PURE__ */ authenticated({
    read: ['userCode', 'deviceAuthorization', 'user', 'userCodeFailures'],
    write: ['userCodeFailures'],
  }),
  answers: { html: true, redirects: [302] },
  summary: 'Device page: type or confirm the code a device shows, then approve or deny it',
});

export const deviceDecision = /* @__PURE__ */ route({
  id: 'deviceDecision',
  method: 'POST',
  path: '/device',
  handler: 'functions/pages/device-decision.ts',
  access: 'session',
  body: 'form',
  permissions: /* @__PURE__ */ authenticated({
    read: ['userCode', 'user', 'userCodeFailures'],
    update: ['deviceAuthorization'],
    write: ['userCodeFailures'],
  }),
  answers: { html: true, redirects: [302, 303] },
  summary: 'Device page form submission: approve or deny',
});

export const authorizationsPage = /* @__PURE__ */ route({
  id: 'authorizationsPage',
  method: 'GET',
  path: '/settings/authorizations',
  handler: 'functions/pages/authorizations-page.ts',
  access: 'browser',
  body: 'none',
  permissions: /* @__PURE__ */ authenticated(/* @__PURE__ */ tableAccess(authorizedApps, { read: ['user'] })),
  errorPage: 'Authorized applications',
  answers: { html: true, redirects: [302] },
  summary: 'Authorized applications page, with a Revoke button per application',
});

export const authorizationsPageRevoke = /* @__PURE__ */ route({
  id: 'authorizationsPageRevoke',
  method: 'POST',
  path: '/settings/authorizations',
  handler: 'functions/pages/authorizations-revoke.ts',
  access: 'session',
  body: 'form',
  permissions: /* @__PURE__ */ authenticated(/* @__PURE__ */ tableAccess(revokeAuthorizationAccess, { read: ['user'] })),
  errorPage: 'Authorized applications',
  answers: { redirects: [302, 303] },
  summary: 'Revoke form submission of the authorized applications page',
});

/** This area's rows, in the order the table lists them. */
export const pageRoutes = [
  loginPage,
  loginSubmit,
  consentPage,
  consentDecision,
  devicePage,
  deviceDecision,
  authorizationsPage,
  authorizationsPageRevoke,
] as const satisfies readonly Route[];
