import { describe, expect, it, vi } from 'vitest';
import { newId } from '../../../lib/ids.js';
import { buildContextOf } from '../../support/conformance/build-contexts.js';
import { useDeploysOnEcsSim } from '../../support/conformance/deploys-on-ecs-sim.js';
import { pollUntil } from '../../support/poll.js';

/*
 * A deploy from source on the AWS simulator, as the deployed functions do it: the deploy routes'
 * DeployService over the AWS build site (presigned S3 PUT, CodeBuild, the build log), the context
 * bucket's Object Created event and CodeBuild's state changes through the build events queue to
 * the build events function's handler, the built image going live through the ECS runtime's
 * restart, and the later look at a build whose events were lost.
 */
await vi.hoisted(async () => {
  const { ecsSimSettings, simDeploySettings } = await import('../../support/ecs-settings.js');
  Object.assign(process.env, ecsSimSettings(simDeploySettings()));
});

// A simulated minute is 200 ms: the 5-minute build timeout is a second.
const aws = useDeploysOnEcsSim({ seed: 33, minuteMs: 200 });
const { runningContainer, deployAndWait } = aws;

describe('a deploy from source on the AWS simulator', () => {
  it('builds the uploaded context on CodeBuild and goes live as a new release pinned by its ECR digest', async () => {
    const containerId = await runningContainer();
    const before = await aws.stack.parts.service.get(aws.stack.caller, containerId);

    const deploy = await deployAndWait(containerId, { Dockerfile: 'FROM scratch\nCOPY app /app\n', app: 'v2' });
    const after = await aws.stack.parts.service.get(aws.stack.caller, containerId);

    expect(deploy).toMatchObject({ state: 'live', release: (before.release ?? 1) + 1 });
    expect(deploy.image).toMatch(
      new RegExp(
        `^123456789012\\.dkr\\.ecr\\.us-east-1\\.amazonaws\\.com/builds/${aws.stack.caller.userId}/${containerId}@sha256:[0-9a-f]{64}$`,
      ),
    );
    expect(after).toMatchObject({ image: deploy.image, release: deploy.release });
    // The context is gone once built.
    expect([...aws.sim.s3.objects.keys()].filter((key) => key.includes(deploy.id))).toEqual([]);
  }, 60_000);

  it('ends a failing RUN step failed with the step and its code, the container keeping its release', async () => {
    const containerId = await runningContainer();
    const before = await aws.stack.parts.service.get(aws.stack.caller, containerId);

    const deploy = await deployAndWait(containerId, { Dockerfile: 'FROM scratch\nRUN exit 3\n' });
    const after = await aws.stack.parts.service.get(aws.stack.caller, containerId);

    expect(deploy).toMatchObject({ state: 'failed', stateReason: 'step 2/2 `RUN exit 3` exited with code 3', image: null });
    expect(after).toMatchObject({ state: 'running', image: before.image, release: before.release });
  }, 60_000);

  it('recovers a build whose every event after the start was lost: the later look asks CodeBuild and goes live', async () => {
    const containerId = await runningContainer();
    aws.sim.codebuild.eventFaults = { lose: (build) => build.currentPhase !== 'QUEUED' };
    try {
      // The later look comes at the timeout and a minute's grace: 5 simulated minutes are a second, the grace 60 s.
      const body = await buildContextOf({ Dockerfile: 'FROM scratch\n' });
      const { deploy, upload } = await aws.deploys.create(aws.stack.caller, containerId, {
        sizeBytes: body.length,
        dockerfile: 'Dockerfile',
        buildArgs: {},
      });
      await fetch(upload.url, { method: upload.method, headers: upload.headers, body });
      const building = await pollUntil(
        () => aws.deploys.get(aws.stack.caller, containerId, deploy.id),
        (found) => found.buildId !== null,
        10_000,
      );
      await pollUntil(
        async () => aws.sim.codebuild.lostEvents.some((event) => event.startsWith(`${building.buildId} SUCCEEDED`)),
        Boolean,
        10_000,
      );
      expect((await aws.deploys.get(aws.stack.caller, containerId, deploy.id)).state).toBe('building');
      // A read asked to wait while it builds answers at once on AWS: the build's news reaches another function.
      const asked = performance.now();
      const waited = await aws.deploys.get(aws.stack.caller, containerId, deploy.id, { changedFrom: 'building', ms: 20_000 });
      expect(waited.state).toBe('building');
      expect(performance.now() - asked).toBeLessThan(5_000);

      // The delayed message is due after BUILD_TIMEOUT_S + 60 s; the test asks as it would arrive.
      const outcome = await aws.deploys.checkBuild({ accountId: aws.stack.caller.userId, containerId, deployId: deploy.id });

      expect(outcome).toBe('live');
      expect(await aws.deploys.get(aws.stack.caller, containerId, deploy.id)).toMatchObject({ state: 'live' });
    } finally {
      aws.sim.codebuild.eventFaults = {};
    }
  }, 60_000);

  it('answers another account 404 for the deploys and the logs of a container it does not own', async () => {
    const containerId = await runningContainer();
    const deploy = await deployAndWait(containerId, { Dockerfile: 'FROM scratch\n' });
    const stranger = { userId: newId(), role: 'user' as const };

    await expect(aws.deploys.get(stranger, containerId, deploy.id)).rejects.toMatchObject({ statusCode: 404 });
    await expect(aws.deploys.logs(stranger, containerId, deploy.id, { limit: 10 })).rejects.toMatchObject({ statusCode: 404 });
    await expect(aws.deploys.list(stranger, containerId, { limit: 10 })).rejects.toMatchObject({ statusCode: 404 });
  }, 60_000);
});
