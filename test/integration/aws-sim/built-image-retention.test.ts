import { describe, expect, it, vi } from 'vitest';
import { BUILT_IMAGES_KEPT } from '../../../infra/constructs/image-builds.js';
import { useDeploysOnEcsSim } from '../../support/conformance/deploys-on-ecs-sim.js';
import { pollUntil } from '../../support/poll.js';

/*
 * Built images kept as releases need them on the AWS simulator (docs/deploys.md, "Builds on AWS"):
 * deploys as the deployed functions run them (test/integration/aws-sim/deploy-journey.test.ts),
 * the build events function tagging a deploy's image as a release's before it goes live, and the
 * simulator's ECR evaluating the repositories' lifecycle policy, read from the project's
 * buildspec, late.
 */
await vi.hoisted(async () => {
  const { ecsSimSettings, simDeploySettings } = await import('../../support/ecs-settings.js');
  Object.assign(process.env, ecsSimSettings(simDeploySettings()));
});

// A simulated minute is 2 s: the 5-minute build timeout is 10 s, past any build here on a busy machine.
const aws = useDeploysOnEcsSim({ seed: 34, minuteMs: 2000 });
const { runningContainer, deployAndWait } = aws;

describe('built images kept on the AWS simulator', () => {
  it('keeps the images of the releases through N+2 deploys that failed readiness and a late lifecycle evaluation: a rollback to the oldest kept release runs', async () => {
    // Prepare: two releases from deploys, then N+2 deploys whose image builds but whose task never gets ready
    const containerId = await runningContainer();
    const first = await deployAndWait(containerId, { Dockerfile: 'FROM scratch\nCOPY app /app\n', app: `first ${containerId}` });
    const second = await deployAndWait(containerId, { Dockerfile: 'FROM scratch\nCOPY app /app\n', app: `second ${containerId}` });
    expect([first.state, second.state]).toEqual(['live', 'live']);
    for (let failing = 0; failing < BUILT_IMAGES_KEPT + 2; failing += 1) {
      const failed = await deployAndWait(containerId, {
        Dockerfile: 'FROM scratch\nENV SIM_EXIT_AFTER_MS=0\nCOPY app /app\n',
        app: `failing ${failing} ${containerId}`,
      });
      expect(failed.state, failed.stateReason ?? '').toBe('failed');
      expect(failed.stateReason).toMatch(/^image not ready/);
    }
    // The last failed deploy's task is still being let go of when its record says failed (on a busy machine the rollback
    // below then lost to that write, 409, as any change racing it would): the owner rolls back once the container is settled.
    await pollUntil(
      () => aws.stack.parts.service.get(aws.stack.caller, containerId),
      (container) => container.state === 'running' && !container.pendingTaskArn,
      20_000,
    );

    // Act: ECR evaluates the repository's lifecycle policy late, past every rule's day; the owner rolls back as soon as
    // the last deploy reads failed (the container is back on its release by then)
    aws.sim.ecr.evaluateLifecycle(Date.now() + 2 * 24 * 60 * 60 * 1000);
    const rolledBack = await aws.stack.parts.service
      .rollback(aws.stack.caller, containerId, first.release!)
      .catch((error: unknown) => error);

    // Assess: the failed deploys' images went, the releases' stayed, and the rollback runs the oldest kept release
    const kept = aws.sim.ecr.repositories.get(`builds/${aws.stack.caller.userId}/${containerId}`)!.images.map((image) => image.digest);
    expect(kept.sort()).toEqual([first.image, second.image].map((image) => image!.split('@')[1]).sort());
    expect(rolledBack).not.toBeInstanceOf(Error);
    const after = await pollUntil(
      () => aws.stack.parts.service.get(aws.stack.caller, containerId),
      (container) => container.state === 'running' && container.image === first.image && !container.pendingTaskArn,
      20_000,
    );
    expect(after).toMatchObject({ state: 'running', image: first.image });
  }, 180_000);
});
