import * as z from 'zod';
import { config } from '../config.js';
import { redirectUriProblem } from './redirect-uris.js';

const MAX_REDIRECT_URIS = 10;

const redirectUris = z
  .array(z.string())
  .min(1, 'must list at least one redirect URI')
  .max(MAX_REDIRECT_URIS, `must list at most ${MAX_REDIRECT_URIS} redirect URIs`)
  .superRefine((uris, context) => {
    uris.forEach((uri, index) => {
      const problem = redirectUriProblem(uri, { allowInsecureLoopback: config.ALLOW_INSECURE_REDIRECT_URIS });
      if (problem) context.addIssue({ code: 'custom', path: [index], message: problem });
    });
    if (new Set(uris).size !== uris.length) context.addIssue({ code: 'custom', message: 'must not list a redirect URI twice' });
  });

const name = z.string().trim().min(1).max(100);
const description = z.string().max(1000);

/** Request bodies of the application endpoints (docs/oauth.md); unknown fields are 400. */
export const registerAppBody = z.strictObject({
  name,
  description: description.default(''),
  redirect_uris: redirectUris,
});

export const updateAppBody = z
  .strictObject({ name: name.optional(), description: description.optional(), redirect_uris: redirectUris.optional() })
  .refine((body) => Object.values(body).some((value) => value !== undefined), 'name, description or redirect_uris is required');

/** The consent form: the request it answers and the user's decision (the CSRF token is the middleware's). */
export const consentDecisionBody = z.strictObject({
  csrf_token: z.string().optional(),
  request: z.string().max(100),
  decision: z.enum(['approve', 'deny']),
});

/** The Revoke form of the authorized applications page (the CSRF token is the middleware's). */
export const revokeAuthorizationForm = z.strictObject({
  csrf_token: z.string().optional(),
  authorization: z.string().max(100),
});
