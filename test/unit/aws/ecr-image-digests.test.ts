import { DescribeImagesCommand, ECRClient, ImageNotFoundException, RepositoryNotFoundException } from '@aws-sdk/client-ecr';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { EcrImageDigests } from '../../../lib/aws/ecr-image-digests.js';
import { builtImageRepositoriesFrom } from '../../../lib/containers/built-images.js';

const ecrMock = mockClient(ECRClient);
const REGISTRY = '123456789012.dkr.ecr.us-east-1.amazonaws.com';
const DIGEST = `sha256:${'a'.repeat(64)}`;
const BUILT = `${REGISTRY}/builds/account-1/container-1`;
const digests = new EcrImageDigests(new ECRClient({ region: 'us-east-1' }), builtImageRepositoriesFrom(`${REGISTRY}/builds`)!);
const inputs = () => ecrMock.calls().map((call) => call.args[0].input);
const throttled = () => Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });

beforeEach(() => {
  ecrMock.reset();
});

describe('EcrImageDigests, whether a release image is there', () => {
  it('asks DescribeImages for a built image by its digest, in its own repository, and answers true when ECR has it', async () => {
    // Prepare
    ecrMock.on(DescribeImagesCommand).resolves({ imageDetails: [{ imageDigest: DIGEST, imageStatus: 'ACTIVE' }] });
    // Act
    const available = await digests.isAvailable(`${BUILT}@${DIGEST}`);
    // Assess
    expect(available).toBe(true);
    expect(inputs()).toEqual([
      { registryId: '123456789012', repositoryName: 'builds/account-1/container-1', imageIds: [{ imageDigest: DIGEST }] },
    ]);
  });

  it('answers false for an image the lifecycle policy expired (ImageNotFoundException) or a repository that is gone', async () => {
    // Prepare
    ecrMock
      .on(DescribeImagesCommand)
      .rejectsOnce(new ImageNotFoundException({ message: 'not there', $metadata: {} }))
      .rejectsOnce(new RepositoryNotFoundException({ message: 'no repository', $metadata: {} }));
    // Act
    const answers = [await digests.isAvailable(`${BUILT}@${DIGEST}`), await digests.isAvailable(`${BUILT}@${DIGEST}`)];
    // Assess
    expect(answers).toEqual([false, false]);
  });

  it('answers false for an image moved to the archive, which nothing pulls until it is restored', async () => {
    // Prepare
    ecrMock.on(DescribeImagesCommand).resolves({ imageDetails: [{ imageDigest: DIGEST, imageStatus: 'ARCHIVED' }] });
    // Act / Assess
    expect(await digests.isAvailable(`${BUILT}@${DIGEST}`)).toBe(false);
  });

  it('answers null, not an error, when ECR throttles or fails, so the request that asked goes on', async () => {
    // Prepare
    ecrMock.on(DescribeImagesCommand).rejectsOnce(throttled()).rejectsOnce(new Error('socket hang up'));
    // Act
    const answers = [await digests.isAvailable(`${BUILT}@${DIGEST}`), await digests.isAvailable(`${BUILT}:deploy-1`)];
    // Assess
    expect(answers).toEqual([null, null]);
  });

  it('answers null without a call for an image that is not one of this service’s builds', async () => {
    // Act
    const answers = await Promise.all(
      [
        `public.ecr.aws/nginx/nginx@${DIGEST}`,
        `${REGISTRY}/ecr-public/nginx/nginx@${DIGEST}`,
        `${REGISTRY}/builds@${DIGEST}`,
        `nginx@${DIGEST}`,
      ].map((image) => digests.isAvailable(image)),
    );
    // Assess
    expect(answers).toEqual([null, null, null, null]);
    expect(ecrMock.calls()).toHaveLength(0);
  });
});

describe('EcrImageDigests, digests and owners', () => {
  it('pins a built image named by tag to the digest ECR answers for that tag', async () => {
    // Prepare
    ecrMock.on(DescribeImagesCommand).resolves({ imageDetails: [{ imageDigest: DIGEST }] });
    // Act
    const digest = await digests.digestOf(`${BUILT}:deploy-1`);
    // Assess
    expect(digest).toBe(DIGEST);
    expect(inputs()).toEqual([
      { registryId: '123456789012', repositoryName: 'builds/account-1/container-1', imageIds: [{ imageTag: 'deploy-1' }] },
    ]);
  });

  it('knows no digest for a tag ECR does not hold, nor for another registry’s image', async () => {
    // Prepare
    ecrMock.on(DescribeImagesCommand).rejects(new ImageNotFoundException({ message: 'not there', $metadata: {} }));
    // Act / Assess
    expect(await digests.digestOf(`${BUILT}:gone`)).toBeUndefined();
    expect(await digests.digestOf('public.ecr.aws/nginx/nginx:stable')).toBeUndefined();
    expect(ecrMock.calls()).toHaveLength(1);
  });

  it('names the account whose build an image is, and none for any other image', () => {
    // Act / Assess
    expect(digests.builtBy(`${BUILT}@${DIGEST}`)).toBe('account-1');
    expect(digests.builtBy('public.ecr.aws/nginx/nginx:stable')).toBeUndefined();
    expect(digests.builtBy(`999999999999.dkr.ecr.us-east-1.amazonaws.com/builds/account-1/container-1:x`)).toBeUndefined();
  });
});
