import { config } from '../config.js';
import type { ImageDigests } from '../containers/release.js';
import { imageDigests as awsImageDigests } from './aws/image-digests.js';
import { localImageDigests } from './local-deploys.js';

/** What the runtime CONTAINER_RUNTIME selects knows of images (releases' digests), for the local server and tests. */
export const imageDigests: ImageDigests | undefined = config.CONTAINER_RUNTIME === 'ecs' ? awsImageDigests : localImageDigests();
