import { createHash } from 'node:crypto';
import { AwsError } from './faults.js';

const ACCOUNT = '123456789012';
/** This account's private registry, as image references name it. */
export const SIM_REGISTRY = `${ACCOUNT}.dkr.ecr.us-east-1.amazonaws.com`;
const DAY_MS = 24 * 60 * 60 * 1000;

interface SimImage {
  digest: string;
  tags: Set<string>;
  pushedAt: number;
  manifest: string;
  /** The image's `ENV` (its config), which a container of it starts with under the task's own environment. */
  env: Record<string, string>;
}

interface SimRepository {
  name: string;
  images: SimImage[];
  lifecyclePolicy?: LifecyclePolicy;
}

interface LifecycleRule {
  rulePriority: number;
  selection: {
    tagStatus: 'tagged' | 'untagged' | 'any';
    tagPrefixList?: string[];
    countType: 'imageCountMoreThan' | 'sinceImagePushed';
    countUnit?: 'days';
    countNumber: number;
  };
  action: { type: 'expire' };
}

interface LifecyclePolicy {
  rules: LifecycleRule[];
}

type ImageId = { imageDigest?: string; imageTag?: string };

/**
 * The upstream registry of each pull-through cache rule, by the rule's repository prefix, as
 * infra/constructs/image-pull-through.ts names them.
 */
const PULL_THROUGH_UPSTREAMS: Readonly<Record<string, string>> = {
  'ecr-public': 'public.ecr.aws',
  quay: 'quay.io',
  k8s: 'registry.k8s.io',
  github: 'ghcr.io',
  'docker-hub': 'docker.io',
};

const digestOfText = (text: string): string => `sha256:${createHash('sha256').update(text).digest('hex')}`;

/**
 * The registries behind the pull-through cache rules, as their owners push to them: a tag names
 * one image at a time until its owner pushes another under it (`moveTag`), and an image once
 * pushed stays pullable by its digest. An image nobody pushed in a test has a digest of its own
 * from the start, as every image on a registry has.
 */
export class UpstreamRegistries {
  private readonly tags = new Map<string, string>();
  private readonly known = new Set<string>();

  /** The digest `<host>/<repository>:<tag>` names now. */
  digestOf(image: string): string {
    let digest = this.tags.get(image);
    if (!digest) {
      digest = digestOfText(`${image}#0`);
      this.tags.set(image, digest);
      this.known.add(`${image.slice(0, image.lastIndexOf(':'))}@${digest}`);
    }
    return digest;
  }

  /** Whether `<host>/<repository>@<digest>` was ever pushed. */
  holds(repository: string, digest: string): boolean {
    return this.known.has(`${repository}@${digest}`);
  }

  /** Its owner pushes a new image under `<host>/<repository>:<tag>`; answers the digest the tag names from now on. */
  moveTag(image: string): string {
    const previous = this.digestOf(image);
    const digest = digestOfText(`${image}#${previous}`);
    this.tags.set(image, digest);
    this.known.add(`${image.slice(0, image.lastIndexOf(':'))}@${digest}`);
    return digest;
  }
}

const MANIFEST_TYPE = 'application/vnd.docker.distribution.manifest.v2+json';

/**
 * ECR as the project uses it: images pushed by the buildspec (push, with the repository made on
 * the first push and its tags immutable), the lifecycle policy the buildspec puts, and the calls
 * of lib/aws/ecr-built-images.ts over awsJson1_1 (`AmazonEC2ContainerRegistry_V20150921.*`):
 * BatchGetImage, PutImage (a second tag on an image: ImageAlreadyExistsException for the same tag
 * on the same image, ImageTagAlreadyExistsException for a tag an immutable repository holds on
 * another: https://docs.aws.amazon.com/AmazonECR/latest/APIReference/API_PutImage.html),
 * BatchDeleteImage (by tag it takes the tag off, and the image goes with its last tag; by digest
 * the image goes: https://docs.aws.amazon.com/AmazonECR/latest/APIReference/API_BatchDeleteImage.html)
 * and DescribeImages (1 to 100 `imageIds`; an image asked for that is not there fails the call with
 * ImageNotFoundException, a repository never pushed to with RepositoryNotFoundException:
 * https://docs.aws.amazon.com/AmazonECR/latest/APIReference/API_DescribeImages.html).
 *
 * Lifecycle policies are checked as ECR checks them when put, and evaluated only when
 * `evaluateLifecycle` is called: ECR evaluates asynchronously and expires what the rules select
 * within 24 hours (https://docs.aws.amazon.com/AmazonECR/latest/userguide/lp_creation.html), so a
 * test says when the evaluation runs, and at what clock. The evaluation follows
 * https://docs.aws.amazon.com/AmazonECR/latest/userguide/LifecyclePolicies.html: rules apply
 * lowest priority first; an image that matches a rule's tag selection is never expired by a later
 * rule; `imageCountMoreThan` keeps the newest `countNumber` by push time and expires the rest;
 * `sinceImagePushed` expires those pushed more than `countNumber` days ago.
 */
export class EcrSim {
  readonly repositories = new Map<string, SimRepository>();
  /** Every image an evaluation expired: the repository, its digest and tags, and the rule's priority. */
  readonly expired: Array<{ repository: string; digest: string; tags: string[]; rulePriority: number }> = [];
  /** Every API call the SDK made, in order, with its input (the buildspec's pushes are not calls). */
  readonly calls: Array<{ action: string; input: any }> = [];
  /** The registries the pull-through cache rules front (`public.ecr.aws`, `docker.io`, …). */
  readonly upstream = new UpstreamRegistries();

  /** `docker push` of the buildspec: the repository is made on its first push (create-repository, IMMUTABLE tags). */
  push(repositoryName: string, tag: string, digest: string, env: Record<string, string>, at = Date.now()): void {
    let repository = this.repositories.get(repositoryName);
    if (!repository) {
      repository = { name: repositoryName, images: [] };
      this.repositories.set(repositoryName, repository);
    }
    const holder = repository.images.find((image) => image.tags.has(tag));
    if (holder && holder.digest !== digest)
      throw new AwsError(
        'ImageTagAlreadyExistsException',
        `The image tag '${tag}' already exists in the '${repositoryName}' repository and cannot be overwritten because the repository is immutable.`,
      );
    const existing = repository.images.find((image) => image.digest === digest);
    if (existing) {
      existing.tags.add(tag);
      return;
    }
    const manifest = JSON.stringify({ schemaVersion: 2, mediaType: MANIFEST_TYPE, config: { digest, env } });
    repository.images.push({ digest, tags: new Set([tag]), pushedAt: at, manifest, env });
  }

  /** `aws ecr put-lifecycle-policy`, checked as ECR checks a policy before it takes it. */
  putLifecyclePolicy(repositoryName: string, text: string): void {
    const repository = this.repository(repositoryName);
    const policy = JSON.parse(text) as LifecyclePolicy;
    const priorities = policy.rules.map((rule) => rule.rulePriority);
    if (new Set(priorities).size !== priorities.length) throw invalid('rulePriority must be unique');
    const highest = Math.max(...priorities);
    for (const rule of policy.rules) {
      const { selection } = rule;
      if (selection.tagStatus === 'any' && rule.rulePriority !== highest)
        throw invalid('a rule with tagStatus any must have the highest rulePriority');
      if (selection.tagStatus === 'tagged' && !selection.tagPrefixList?.length) throw invalid('tagged needs a tagPrefixList');
      if (selection.tagStatus !== 'tagged' && selection.tagPrefixList) throw invalid('only tagged takes a tagPrefixList');
      if (selection.countType === 'imageCountMoreThan' && selection.countUnit) throw invalid('imageCountMoreThan takes no countUnit');
      if (selection.countType === 'sinceImagePushed' && selection.countUnit !== 'days') throw invalid('sinceImagePushed counts days');
      if (!Number.isInteger(selection.countNumber) || selection.countNumber < 1) throw invalid('countNumber must be a whole number from 1');
      if (rule.action.type !== 'expire') throw invalid('the action is expire');
    }
    repository.lifecyclePolicy = policy;
  }

  /** A lifecycle evaluation of every repository with a policy, as ECR runs it some time after the pushes (`at`: its clock). */
  evaluateLifecycle(at = Date.now()): void {
    for (const repository of this.repositories.values()) {
      const policy = repository.lifecyclePolicy;
      if (!policy) continue;
      const matched = new Set<SimImage>();
      const expire = new Map<SimImage, number>();
      for (const rule of [...policy.rules].sort((a, b) => a.rulePriority - b.rulePriority)) {
        const selected = repository.images.filter((image) => !matched.has(image) && selects(rule, image));
        for (const image of selected) matched.add(image);
        const { countType, countNumber } = rule.selection;
        const expiring =
          countType === 'imageCountMoreThan'
            ? [...selected].sort((a, b) => b.pushedAt - a.pushedAt).slice(countNumber)
            : selected.filter((image) => at - image.pushedAt > countNumber * DAY_MS);
        for (const image of expiring) expire.set(image, rule.rulePriority);
      }
      for (const [image, rulePriority] of expire) {
        this.expired.push({ repository: repository.name, digest: image.digest, tags: [...image.tags], rulePriority });
      }
      repository.images = repository.images.filter((image) => !expire.has(image));
    }
  }

  /**
   * What a pull of `reference` (`<registry>/<repository>[:tag|@digest]`) finds: the image, or why
   * not; undefined for an image of another registry. A repository under a pull-through cache rule's
   * prefix is made on its first pull, and a pull by tag takes what the upstream's tag names now:
   * "for subsequent pull requests of the cached image with a given tag, Amazon ECR checks the
   * upstream registry to see if there is a new version of the image with that specific tag and
   * attempts to update the image in your private registry at least once every 24 hours"
   * (https://docs.aws.amazon.com/AmazonECR/latest/userguide/pull-through-cache.html); this cache
   * checks at every pull, the most eager reading of that.
   */
  pull(reference: string): { image: SimImage } | { missing: string } | undefined {
    if (!reference.startsWith(`${SIM_REGISTRY}/`)) return undefined;
    const path = reference.slice(SIM_REGISTRY.length + 1);
    const [name, digest] = path.split('@');
    const colon = name!.lastIndexOf(':');
    const repositoryName = digest ? name! : colon >= 0 ? name!.slice(0, colon) : name!;
    const tag = digest ? undefined : colon >= 0 ? name!.slice(colon + 1) : 'latest';
    const cached = this.pullThrough(repositoryName, tag, digest);
    if (cached) return cached;
    const repository = this.repositories.get(repositoryName);
    if (!repository) return undefined;
    const image = repository.images.find((candidate) => (digest ? candidate.digest === digest : candidate.tags.has(tag!)));
    return image ? { image } : { missing: `${reference}: not found` };
  }

  /** A pull of a repository under a pull-through cache rule's prefix: the upstream's image, cached; undefined for any other repository. */
  private pullThrough(repositoryName: string, tag: string | undefined, digest: string | undefined) {
    const prefix = repositoryName.split('/')[0]!;
    const host = PULL_THROUGH_UPSTREAMS[prefix];
    if (!host || repositoryName === prefix) return undefined;
    const upstream = `${host}/${repositoryName.slice(prefix.length + 1)}`;
    const wanted = digest ?? this.upstream.digestOf(`${upstream}:${tag}`);
    if (digest && !this.upstream.holds(upstream, digest)) return { missing: `${upstream}@${digest}: not found` };
    let repository = this.repositories.get(repositoryName);
    if (!repository) {
      repository = { name: repositoryName, images: [] };
      this.repositories.set(repositoryName, repository);
    }
    let image = repository.images.find((candidate) => candidate.digest === wanted);
    if (!image) {
      const manifest = JSON.stringify({ schemaVersion: 2, mediaType: MANIFEST_TYPE, config: { digest: wanted, env: {} } });
      image = { digest: wanted, tags: new Set(), pushedAt: Date.now(), manifest, env: {} };
      repository.images.push(image);
    }
    if (tag) {
      for (const other of repository.images) other.tags.delete(tag);
      image.tags.add(tag);
    }
    return { image };
  }

  handle(action: string, input: any): unknown {
    this.calls.push({ action, input });
    switch (action) {
      case 'BatchGetImage': {
        const repository = this.repository(String(input.repositoryName));
        const ids: ImageId[] = input.imageIds ?? [];
        const found = ids.map((id) => ({ id, image: this.find(repository, id) }));
        return {
          images: found.flatMap(({ id, image }) =>
            image
              ? [
                  {
                    registryId: ACCOUNT,
                    repositoryName: repository.name,
                    imageId: { imageDigest: image.digest, ...id },
                    imageManifest: image.manifest,
                    imageManifestMediaType: MANIFEST_TYPE,
                  },
                ]
              : [],
          ),
          failures: found.flatMap(({ id, image }) =>
            image ? [] : [{ imageId: id, failureCode: 'ImageNotFound', failureReason: 'Requested image not found' }],
          ),
        };
      }
      case 'PutImage': {
        const repository = this.repository(String(input.repositoryName));
        const tag = String(input.imageTag ?? '');
        const image = repository.images.find(
          (candidate) => candidate.manifest === input.imageManifest && (!input.imageDigest || candidate.digest === input.imageDigest),
        );
        if (!image) throw new AwsError('LayersNotFoundException', 'The image manifest references layers that are not in the repository');
        const holder = repository.images.find((candidate) => candidate.tags.has(tag));
        if (holder === image)
          throw new AwsError(
            'ImageAlreadyExistsException',
            `Image with digest '${image.digest}' and tag '${tag}' already exists in the repository`,
          );
        if (holder)
          throw new AwsError(
            'ImageTagAlreadyExistsException',
            `The image tag '${tag}' already exists in the '${repository.name}' repository and cannot be overwritten because the repository is immutable.`,
          );
        image.tags.add(tag);
        return {
          image: {
            registryId: ACCOUNT,
            repositoryName: repository.name,
            imageId: { imageDigest: image.digest, imageTag: tag },
            imageManifest: image.manifest,
          },
        };
      }
      case 'BatchDeleteImage': {
        const repository = this.repository(String(input.repositoryName));
        const deleted: ImageId[] = [];
        const failures: unknown[] = [];
        for (const id of (input.imageIds ?? []) as ImageId[]) {
          const image = this.find(repository, id);
          if (!image) {
            failures.push({ imageId: id, failureCode: 'ImageNotFound', failureReason: 'Requested image not found' });
            continue;
          }
          if (id.imageTag) image.tags.delete(id.imageTag);
          if (!id.imageTag || image.tags.size === 0) repository.images = repository.images.filter((candidate) => candidate !== image);
          deleted.push({ imageDigest: image.digest, ...(id.imageTag ? { imageTag: id.imageTag } : {}) });
        }
        return { imageIds: deleted, failures };
      }
      case 'DescribeImages': {
        const repository = this.repository(String(input.repositoryName));
        const ids: ImageId[] | undefined = input.imageIds;
        if (ids && (ids.length < 1 || ids.length > 100)) throw new AwsError('InvalidParameterException', 'imageIds takes 1 to 100 images');
        const images = ids ? ids.map((id) => this.find(repository, id)) : repository.images;
        const missing = ids?.find((_id, index) => !images[index]);
        // One image asked for and not there fails the whole call, in ECR's words (as the CLI and SDKs
        // print it, e.g. https://github.com/hashicorp/terraform-provider-aws/issues/35268).
        if (missing)
          throw new AwsError(
            'ImageNotFoundException',
            `The image with imageId {imageDigest:'${missing.imageDigest ?? 'null'}', imageTag:'${missing.imageTag ?? 'null'}'} does not exist within the repository with name '${repository.name}' in the registry with id '${ACCOUNT}'`,
          );
        return {
          imageDetails: (images as SimImage[]).map((image) => ({
            registryId: ACCOUNT,
            repositoryName: repository.name,
            imageDigest: image.digest,
            imageTags: [...image.tags],
            imagePushedAt: image.pushedAt / 1000,
          })),
        };
      }
      default:
        throw new AwsError('InvalidAction', `The simulator does not model ${action}`);
    }
  }

  private repository(name: string): SimRepository {
    const repository = this.repositories.get(name);
    if (!repository)
      throw new AwsError(
        'RepositoryNotFoundException',
        `The repository with name '${name}' does not exist in the registry with id '${ACCOUNT}'`,
      );
    return repository;
  }

  private find(repository: SimRepository, id: ImageId): SimImage | undefined {
    return repository.images.find(
      (image) =>
        (!id.imageDigest || image.digest === id.imageDigest) &&
        (!id.imageTag || image.tags.has(id.imageTag)) &&
        (id.imageDigest || id.imageTag),
    );
  }
}

const invalid = (why: string) =>
  new AwsError('InvalidParameterException', `Invalid parameter at 'LifecyclePolicyText' failed to satisfy constraint: '${why}'`);

/** Whether a rule's tag selection takes the image (tagPrefixList: every prefix matches one of its tags). */
function selects(rule: LifecycleRule, image: SimImage): boolean {
  const { tagStatus, tagPrefixList = [] } = rule.selection;
  if (tagStatus === 'any') return true;
  if (tagStatus === 'untagged') return image.tags.size === 0;
  return image.tags.size > 0 && tagPrefixList.every((prefix) => [...image.tags].some((tag) => tag.startsWith(prefix)));
}
