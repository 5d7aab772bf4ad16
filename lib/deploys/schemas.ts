import * as z from '../zod.js';

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
