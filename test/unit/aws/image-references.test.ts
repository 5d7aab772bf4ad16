import { describe, expect, it } from 'vitest';
import { TaskLaunchError } from '../../../lib/containers/runtime.js';
import { cachedImageReference, pullReferenceFor, pullThroughCacheFrom } from '../../../lib/aws/image-references.js';

const REGISTRY = '123456789012.dkr.ecr.eu-west-1.amazonaws.com';
const DIGEST = `sha256:${'a'.repeat(64)}`;
const withDockerHub = pullThroughCacheFrom(REGISTRY, [
  'public.ecr.aws=ecr-public',
  'quay.io=quay',
  'ghcr.io=github',
  'docker.io=docker-hub',
])!;
const withoutDockerHub = pullThroughCacheFrom(REGISTRY, ['public.ecr.aws=ecr-public', 'quay.io=quay'])!;

describe('cachedImageReference', () => {
  it.each([
    ['nginx', `${REGISTRY}/docker-hub/library/nginx`],
    ['nginx:1.27', `${REGISTRY}/docker-hub/library/nginx:1.27`],
    ['library/nginx:1.27', `${REGISTRY}/docker-hub/library/nginx:1.27`],
    [`docker.io/user/app@${DIGEST}`, `${REGISTRY}/docker-hub/user/app@${DIGEST}`],
    ['index.docker.io/user/app:v1', `${REGISTRY}/docker-hub/user/app:v1`],
    ['ghcr.io/o/r:t', `${REGISTRY}/github/o/r:t`],
    ['public.ecr.aws/x/y', `${REGISTRY}/ecr-public/x/y`],
    ['public.ecr.aws/nginx/nginx-unprivileged:stable-alpine', `${REGISTRY}/ecr-public/nginx/nginx-unprivileged:stable-alpine`],
    ['quay.io/a/b', `${REGISTRY}/quay/a/b`],
    [`quay.io/a/b:1.0@${DIGEST}`, `${REGISTRY}/quay/a/b:1.0@${DIGEST}`],
  ])('pulls %s through its rule as %s', (image, cached) => {
    expect(cachedImageReference(image, withDockerHub)).toBe(cached);
  });

  it('pulls an image of a private ECR registry as it is', () => {
    const own = `${REGISTRY}/team/app:3`;
    const other = '210987654321.dkr.ecr.us-east-1.amazonaws.com/shared/base:1';
    expect([cachedImageReference(own, withDockerHub), cachedImageReference(other, withDockerHub)]).toEqual([own, other]);
  });

  it('finds no rule for Docker Hub without credentials, nor for a registry with no rule', () => {
    expect(
      ['nginx', 'docker.io/user/app:1', 'registry.gitlab.com/g/p:1', 'localhost:5000/app'].map((image) =>
        cachedImageReference(image, withoutDockerHub),
      ),
    ).toEqual([undefined, undefined, undefined, undefined]);
  });
});

describe('pullReferenceFor', () => {
  it('leaves the image alone where the deployment has no cache (the local stack)', () => {
    expect(pullReferenceFor('nginx', pullThroughCacheFrom(undefined, []))).toBe('nginx');
  });

  it('refuses to launch an image no rule covers (one stored before the cache existed) with TaskLaunchError', () => {
    expect(() => pullReferenceFor('nginx:1.27', withoutDockerHub)).toThrow(TaskLaunchError);
  });
});
