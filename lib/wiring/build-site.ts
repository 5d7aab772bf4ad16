import { config } from '../config.js';
import type { BuildSite } from '../deploys/deploy-service.js';
import { awsBuildSite } from './aws/build-site.js';
import { localBuildSite } from './local-deploys.js';

/**
 * Where builds run for the runtime CONTAINER_RUNTIME selects, for the local server and tests.
 * Lambda bundles never contain this module: they resolve #wiring/build-site to lib/wiring/aws/build-site.ts.
 */
export const buildSite: BuildSite = config.CONTAINER_RUNTIME === 'ecs' ? awsBuildSite : localBuildSite();
