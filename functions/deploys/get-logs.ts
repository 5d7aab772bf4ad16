import { buildSite } from '#wiring/build-site';
import { logsQuerySchema } from '../../lib/containers/logs-query.js';
import { endpoint } from '../../lib/http/endpoint.js';
import { pageReply } from '../../lib/http/pagination.js';
import * as route from '../../lib/http/routes.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { deployServiceWith } from '../../lib/wiring/deploys.js';

const deployService = deployServiceWith(buildSite);

export const handler = endpoint(route.getDeployLogs, { query: logsQuerySchema, resolveCredential }, async (request) => {
  const page = await deployService.logs(request.principal, request.params.container_id!, request.params.deploy_id!, request.query);
  return pageReply(request, { items: page.lines, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) });
});
