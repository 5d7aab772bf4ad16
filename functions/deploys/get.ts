import { buildSite } from '#wiring/build-site';
import { deployView } from '../../lib/deploys/deploy.js';
import { endpoint } from '../../lib/http/endpoint.js';
import { ok } from '../../lib/http/reply.js';
import * as route from '../../lib/http/routes.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { deployServiceWith } from '../../lib/wiring/deploys.js';

const deployService = deployServiceWith(buildSite);

export const handler = endpoint(route.getDeploy, { resolveCredential }, async ({ principal, params }) => {
  return ok(deployView(await deployService.get(principal, params.container_id!, params.deploy_id!)));
});
