import { imageDigests } from '#wiring/image-digests';
import { endpoint } from '../../lib/http/endpoint.js';
import { pageQuerySchema, pageReply } from '../../lib/http/pagination.js';
import * as route from '../../lib/http/routes.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { containerServiceWith } from '../../lib/wiring/containers.js';
import { withEcrImageDigests } from '../../lib/wiring/aws/ecr-image-digests.js';

// Each release says whether its image is still there: on AWS ECR answers for built images (docs/deploys.md, "Retention").
const containerService = containerServiceWith({ imageDigests: withEcrImageDigests(imageDigests) });

export const handler = endpoint(route.listReleases, { query: pageQuerySchema, resolveCredential }, async (request) => {
  return pageReply(request, await containerService.listReleases(request.principal, request.params.container_id!, request.query));
});
