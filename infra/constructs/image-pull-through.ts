import { ArnFormat, Aws, Stack } from 'aws-cdk-lib';
import * as ecr from 'aws-cdk-lib/aws-ecr';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { cachedImageReference } from '../../lib/aws/image-references.js';
import { imageLocationOf } from '../../lib/containers/image-location.js';
import { acknowledgeNagRule, acknowledgeWildcardResource } from '../nag.js';

/**
 * The upstream registries users' images are pulled through, each by an ECR pull-through cache
 * rule (https://docs.aws.amazon.com/AmazonECR/latest/userguide/pull-through-cache.html): ECR
 * Public, Quay and the Kubernetes registry need no credentials; Docker Hub and GitHub's
 * registry need a Secrets Manager secret whose name starts with `ecr-pullthroughcache/`, so their
 * rules exist only when the deployment names one (`dockerHubCredentialsSecretArn`,
 * `githubCredentialsSecretArn`). `host` is how an image reference names the registry
 * (`docker.io` for Docker Hub's shorthand); `upstreamRegistryUrl` is what ECR takes
 * (https://docs.aws.amazon.com/AmazonECR/latest/APIReference/API_CreatePullThroughCacheRule.html).
 */
export const PULL_THROUGH_UPSTREAMS = [
  { host: 'public.ecr.aws', prefix: 'ecr-public', upstreamRegistryUrl: 'public.ecr.aws', upstreamRegistry: 'ecr-public' },
  { host: 'quay.io', prefix: 'quay', upstreamRegistryUrl: 'quay.io', upstreamRegistry: 'quay' },
  { host: 'registry.k8s.io', prefix: 'k8s', upstreamRegistryUrl: 'registry.k8s.io', upstreamRegistry: 'k8s' },
  {
    host: 'ghcr.io',
    prefix: 'github',
    upstreamRegistryUrl: 'ghcr.io',
    upstreamRegistry: 'github-container-registry',
    credentials: 'github',
  },
  {
    host: 'docker.io',
    prefix: 'docker-hub',
    upstreamRegistryUrl: 'registry-1.docker.io',
    upstreamRegistry: 'docker-hub',
    credentials: 'dockerHub',
  },
] as const;

export interface ImagePullThroughProps {
  /** The role ECS pulls images with: it may pull, and import upstream images, under the rules' prefixes only. */
  executionRole: iam.IRole;
  /** Secrets Manager secrets (`ecr-pullthroughcache/…`) with the registries' credentials; no secret, no rule. */
  credentials: { dockerHub?: string; github?: string };
}

/**
 * This account's pull-through cache rules for users' images, and the execution role's permission
 * to pull through them: the first pull of an image creates its repository under the rule's
 * prefix and imports it (ecr:CreateRepository, ecr:BatchImportUpstreamImage:
 * https://docs.aws.amazon.com/AmazonECR/latest/userguide/pull-through-cache-iam.html).
 * Rules belong to the account and Region, so one deployment per account and Region owns them.
 */
export class ImagePullThrough extends Construct {
  /** Upstream hosts with a rule, and their prefixes. */
  readonly rules: ReadonlyArray<{ host: string; prefix: string }>;
  /** `{account}.dkr.ecr.{region}.{url suffix}` */
  readonly registry = `${Aws.ACCOUNT_ID}.dkr.ecr.${Aws.REGION}.${Aws.URL_SUFFIX}`;

  constructor(scope: Construct, id: string, props: ImagePullThroughProps) {
    super(scope, id);
    const upstreams = PULL_THROUGH_UPSTREAMS.filter((upstream) => !('credentials' in upstream) || props.credentials[upstream.credentials]);
    for (const upstream of upstreams) {
      const credentialArn = 'credentials' in upstream ? props.credentials[upstream.credentials] : undefined;
      new ecr.CfnPullThroughCacheRule(this, `Rule-${upstream.prefix}`, {
        ecrRepositoryPrefix: upstream.prefix,
        upstreamRegistryUrl: upstream.upstreamRegistryUrl,
        upstreamRegistry: upstream.upstreamRegistry,
        ...(credentialArn ? { credentialArn } : {}),
      });
    }
    this.rules = upstreams.map(({ host, prefix }) => ({ host, prefix }));

    const stack = Stack.of(this);
    const repositories = upstreams.map((upstream) =>
      stack.formatArn({
        service: 'ecr',
        resource: 'repository',
        resourceName: `${upstream.prefix}/*`,
        arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
      }),
    );
    props.executionRole.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: [
          'ecr:BatchCheckLayerAvailability',
          'ecr:GetDownloadUrlForLayer',
          'ecr:BatchGetImage',
          'ecr:BatchImportUpstreamImage',
          'ecr:CreateRepository',
        ],
        resources: repositories,
      }),
    );
    props.executionRole.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['ecr:GetAuthorizationToken'], resources: ['*'] }));
    for (const repository of repositories) {
      acknowledgeWildcardResource(
        props.executionRole,
        repository,
        'Pull-through cache repositories are created on first pull, one per upstream image, under the rule prefix; the role may pull and import under that prefix only.',
      );
    }
    acknowledgeNagRule(
      props.executionRole,
      'AwsSolutions-IAM5[Resource::*]',
      'ecr:GetAuthorizationToken has no resource-level permissions (IAM service authorization reference); pulls are limited to the pull-through prefixes and the repositories the allow-list names.',
    );
  }

  /**
   * The stack's own image `image` (an upstream reference, pinned by digest) as pulled through this
   * account's rule for its registry, and `role` (a task's execution role) let to pull it: pull and,
   * for the first pull, create and import, on that one repository only. Throws for a registry
   * without a rule.
   */
  pullThrough(image: string, role: iam.IRole): string {
    const prefixes = Object.fromEntries(this.rules.map(({ host, prefix }) => [host, prefix]));
    const reference = cachedImageReference(image, { registry: this.registry, prefixes });
    if (!reference)
      throw new Error(`${image} is on a registry without a pull-through cache rule (${this.rules.map(({ host }) => host).join(', ')})`);
    const { host, path } = imageLocationOf(image);
    const repository = Stack.of(this).formatArn({
      service: 'ecr',
      resource: 'repository',
      resourceName: `${prefixes[host]}/${path.join('/')}`,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: [
          'ecr:BatchCheckLayerAvailability',
          'ecr:GetDownloadUrlForLayer',
          'ecr:BatchGetImage',
          'ecr:BatchImportUpstreamImage',
          'ecr:CreateRepository',
        ],
        resources: [repository],
      }),
    );
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['ecr:GetAuthorizationToken'], resources: ['*'] }));
    acknowledgeNagRule(
      role,
      'AwsSolutions-IAM5[Resource::*]',
      'ecr:GetAuthorizationToken has no resource-level permissions (IAM service authorization reference); the pull is limited to the one cached repository of the image.',
    );
    return reference;
  }

  /** What the functions read (lib/config.ts): this account's registry and its rules, `host=prefix`. */
  get functionEnvironment(): Record<string, string> {
    return {
      IMAGE_PULL_THROUGH_REGISTRY: this.registry,
      IMAGE_PULL_THROUGH_RULES: this.rules.map(({ host, prefix }) => `${host}=${prefix}`).join(','),
    };
  }
}
