import * as z from '../zod.js';
import { config } from '../config.js';
import { DEFAULT_PREVIOUS_SECRET_TTL_SECONDS, MAX_PREVIOUS_SECRET_TTL_SECONDS } from './applications.js';
import { redirectUriProblem } from './redirect-uris.js';
import { MAX_REFRESH_REUSE_GRACE_SECONDS } from './refresh-grace.js';
import { isReservedAppName, RESERVED_NAME_MESSAGE } from './reserved-names.js';

const MAX_REDIRECT_URIS = 10;

const redirectUris = z.array(z.string()).check(
  z.minLength(1, 'must list at least one redirect URI'),
  z.maxLength(MAX_REDIRECT_URIS, `must list at most ${MAX_REDIRECT_URIS} redirect URIs`),
  z.superRefine((uris, context) => {
    uris.forEach((uri, index) => {
      const problem = redirectUriProblem(uri, { allowInsecureLoopback: config.ALLOW_INSECURE_REDIRECT_URIS });
      if (problem) context.addIssue({ code: 'custom', path: [index], message: problem });
    });
    if (new Set(uris).size !== uris.length) context.addIssue({ code: 'custom', message: 'must not list a redirect URI twice' });
  }),
);

/** An application's name: never one that passes for this service's own CLI (RFC 8628 section 5.4). */
const name = z.string().check(
  z.trim(),
  z.minLength(1),
  z.maxLength(100),
  z.refine((value) => !isReservedAppName(value), RESERVED_NAME_MESSAGE),
);
const description = z.string().check(z.maxLength(1000));

/** Request bodies of the application endpoints (docs/oauth.md); unknown fields are 400. */
export const registerAppBody = z.strictObject({
  name,
  description: z._default(description, ''),
  redirect_uris: redirectUris,
  token_endpoint_auth_method: z.optional(z.enum(['client_secret_basic', 'client_secret_post', 'none'])),
});

/**
 * The application's own refresh retry grace in seconds (docs/oauth.md, "Refresh retries"); null
 * returns it to the operator's setting.
 */
const refreshReuseGraceSeconds = z.nullable(z.int().check(z.minimum(0), z.maximum(MAX_REFRESH_REUSE_GRACE_SECONDS)));

export const updateAppBody = z
  .strictObject({
    name: z.optional(name),
    description: z.optional(description),
    redirect_uris: z.optional(redirectUris),
    refresh_reuse_grace_seconds: z.optional(refreshReuseGraceSeconds),
  })
  .check(
    z.refine(
      (body) => Object.values(body).some((value) => value !== undefined),
      'name, description, redirect_uris or refresh_reuse_grace_seconds is required',
    ),
  );

/**
 * RFC 7591 section 2: the client metadata a dynamic registration may send. Unknown metadata is
 * ignored, as section 2 asks; what it sends is held to the rules of registered applications.
 */
export const clientRegistrationBody = z.object({
  redirect_uris: redirectUris,
  client_name: z._default(name, 'Unnamed application'),
  token_endpoint_auth_method: z._default(z.enum(['client_secret_basic', 'client_secret_post', 'none']), 'client_secret_basic'),
  // This server issues codes and refreshes them; a client asking for other grants is told so.
  grant_types: z.optional(z.array(z.enum(['authorization_code', 'refresh_token']))),
  response_types: z.optional(z.array(z.enum(['code']))),
});

/** POST /api/v1/oauth/apps/{id}/secret: how long the replaced secret keeps working (docs/oauth.md). */
export const rotateSecretBody = z.strictObject({
  previous_secret_ttl_seconds: z._default(
    z.int().check(z.minimum(0), z.maximum(MAX_PREVIOUS_SECRET_TTL_SECONDS)),
    DEFAULT_PREVIOUS_SECRET_TTL_SECONDS,
  ),
});
