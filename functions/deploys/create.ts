import { buildSite } from '#wiring/build-site';
import { runPolicy } from '#wiring/run-policy';
import { deployView } from '../../lib/deploys/deploy.js';
import { createDeployBody } from '../../lib/deploys/schemas.js';
import { endpoint } from '../../lib/http/endpoint.js';
import { json } from '../../lib/http/reply.js';
import * as route from '../../lib/http/routes.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { deployServiceWith } from '../../lib/wiring/deploys.js';

// A deploy runs its owner's code once built: refused where the runtime may not run the caller's (the policy, below).
const deployService = deployServiceWith(buildSite);

export const handler = endpoint(
  route.createDeploy,
  { body: createDeployBody, resolveCredential, authorize: runPolicy.assertMayRun },
  async ({ principal, params, body }) => {
    const { deploy, upload } = await deployService.create(principal, params.container_id!, {
      sizeBytes: body.size_bytes,
      dockerfile: body.dockerfile,
      buildArgs: body.build_args,
    });
    return json(201, { data: deployView(deploy, upload) });
  },
);
