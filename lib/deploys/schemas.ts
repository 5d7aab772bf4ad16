import { DEPLOY_STATES } from './deploy.js';
import * as z from '../zod.js';
import { wholeNumberParam } from '../http/query-numbers.js';

const BUILD_ARG_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const MAX_BUILD_ARGS = 64;

/**
 * POST /api/v1/containers/{id}/deploys. `size_bytes` is the exact size of the gzipped tar the
 * client will upload; past DEPLOY_MAX_CONTEXT_BYTES the service answers 413 naming the limit.
 */
export const createDeployBody = z.strictObject({
  size_bytes: z.int('must be a whole number of bytes').check(z.minimum(1, 'must be at least 1')),
  dockerfile: z._default(
    z.string().check(
      z.minLength(1, 'must not be empty'),
      z.maxLength(255, 'must be at most 255 characters'),
      z.refine((path) => !path.startsWith('/') && !path.split(/[\\/]/).includes('..'), 'must be a path inside the context'),
    ),
    'Dockerfile',
  ),
  build_args: z._default(
    z
      .record(
        z.string().check(z.regex(BUILD_ARG_NAME, 'names must match ^[A-Za-z_][A-Za-z0-9_]{0,127}$')),
        z.string().check(z.maxLength(4096)),
      )
      .check(z.refine((args) => Object.keys(args).length <= MAX_BUILD_ARGS, `must hold at most ${MAX_BUILD_ARGS} arguments`)),
    {},
  ),
});

/** The longest a read of a deploy waits for its change, and how long when `wait_s` is not given (docs/deploys.md, "Waiting for a change"). */
export const MAX_DEPLOY_WAIT_S = 20;
export const DEFAULT_DEPLOY_WAIT_S = 10;

/**
 * GET /api/v1/containers/{id}/deploys/{deploy_id}: with `changed_from`, the answer waits while the
 * deploy is in that state, up to `wait_s` seconds, where the service hears of changes in the
 * process that answers (the local stack); elsewhere it answers at once. Either way the record as it is then.
 */
export const deployReadQuery = z.strictObject({
  changed_from: z.optional(z.enum(DEPLOY_STATES, { error: `must be one of ${DEPLOY_STATES.join(', ')}` })),
  wait_s: wholeNumberParam(MAX_DEPLOY_WAIT_S, DEFAULT_DEPLOY_WAIT_S, 'seconds'),
});
