import { buildSite } from '#wiring/build-site';
import { deployView } from '../../lib/deploys/deploy.js';
import { endpoint } from '../../lib/http/endpoint.js';
import { pageQuerySchema, pageReply } from '../../lib/http/pagination.js';
import * as route from '../../lib/http/routes.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { deployServiceWith } from '../../lib/wiring/deploys.js';

const deployService = deployServiceWith(buildSite);

export const handler = endpoint(route.listDeploys, { query: pageQuerySchema, resolveCredential }, async (request) => {
  const page = await deployService.list(request.principal, request.params.container_id!, request.query);
  return pageReply(request, { ...page, items: page.items.map((deploy) => deployView(deploy)) });
});
