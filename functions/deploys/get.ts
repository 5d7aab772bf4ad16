import { buildSite } from '#wiring/build-site';
import { deployView } from '../../lib/deploys/deploy.js';
import { deployReadQuery } from '../../lib/deploys/schemas.js';
import { endpoint } from '../../lib/http/endpoint.js';
import { ok } from '../../lib/http/reply.js';
import * as route from '../../lib/http/routes.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { deployServiceWith } from '../../lib/wiring/deploys.js';

const deployService = deployServiceWith(buildSite);

export const handler = endpoint(route.getDeploy, { query: deployReadQuery, resolveCredential }, async ({ principal, params, query }) => {
  const wait = query.changed_from ? { changedFrom: query.changed_from, ms: query.wait_s * 1000 } : undefined;
  return ok(deployView(await deployService.get(principal, params.container_id!, params.deploy_id!, wait)));
});
