import { containerRuntime, runPolicy } from '#wiring/container-runtime';
import { imageDigests } from '#wiring/image-digests';
import { containerView } from '../../lib/containers/container.js';
import { releaseVersionOf } from '../../lib/containers/release.js';
import { NotFoundError } from '../../lib/errors.js';
import { endpoint } from '../../lib/http/endpoint.js';
import { ok } from '../../lib/http/reply.js';
import * as route from '../../lib/http/routes.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { containerServiceWith } from '../../lib/wiring/containers.js';
import { deferredWork } from '../../lib/wiring/deferred-work.js';
import { withEcrImageDigests } from '../../lib/wiring/aws/ecr-image-digests.js';

// A rollback to a release whose image was pruned is refused: on AWS ECR says so for built images (docs/deploys.md, "Retention").
const containerService = containerServiceWith({
  runtime: containerRuntime,
  deferredWork,
  runPolicy,
  imageDigests: withEcrImageDigests(imageDigests),
});

export const handler = endpoint(
  route.rollbackRelease,
  { resolveCredential, authorize: runPolicy.assertMayRun },
  async ({ principal, params }) => {
    const version = releaseVersionOf(params.version);
    if (version === undefined) throw new NotFoundError('No such release');
    return ok(containerView(await containerService.rollback(principal, params.container_id!, version)));
  },
);
