import { ECRClient } from '@aws-sdk/client-ecr';
import { EcrBuiltImages } from '../../aws/ecr-built-images.js';
import type { BuildSite } from '../../deploys/deploy-service.js';

/**
 * The build site of the one function that takes deploys live (the build events function): with
 * ECR's release tags (lib/aws/ecr-built-images.ts), which only it needs, so the deploy routes'
 * bundles carry no ECR client.
 */
export function withReleaseTags(site: BuildSite, region: string): BuildSite {
  return 'builder' in site ? { ...site, images: new EcrBuiltImages(new ECRClient({ region })) } : site;
}
