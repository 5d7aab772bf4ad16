import * as z from '../zod.js';

// The pages' forms, apart from the application schemas (lib/oauth/schemas.ts): those check a name
// against the confusables table, which no function that only reads a form should carry.

/** The consent form: the request it answers and the user's decision (the CSRF token is the middleware's). */
export const consentDecisionBody = z.strictObject({
  csrf_token: z.optional(z.string()),
  request: z.string().check(z.maxLength(100)),
  decision: z.enum(['approve', 'deny']),
});

/** The Revoke form of the authorized applications page (the CSRF token is the middleware's). */
export const revokeAuthorizationForm = z.strictObject({
  csrf_token: z.optional(z.string()),
  // A client id, which may be a client metadata document's URL (at most 1,024 characters).
  authorization: z.string().check(z.maxLength(1024)),
});

/** The device page's form (RFC 8628 section 3.3; the CSRF token is the middleware's). */
export const deviceDecisionBody = z.strictObject({
  csrf_token: z.optional(z.string()),
  user_code: z.string().check(z.maxLength(20)),
  decision: z.enum(['approve', 'deny']),
});
