import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { ReleaseView } from '../../../lib/containers/release.js';
import { SIM_REGISTRY } from '../../support/aws-sim/ecr.js';
import { useDeploysOnEcsSim } from '../../support/conformance/deploys-on-ecs-sim.js';
import { uniqueHostname } from '../../support/conformance/journeys.js';
import { pollUntil } from '../../support/poll.js';
import { realAccount, type ReleaseFunctions, releaseFunctions } from '../../support/release-functions.js';

/*
 * Releases named by tag on the AWS simulator (docs/deploys.md, "Releases", its "Digests"): a create or PATCH
 * records the tag, and the release is pinned to the digest its task's image resolved to once
 * that task reports RUNNING (the container's `imageDigest` in the "ECS Task State Change" event),
 * so that a rollback to it runs what ran, whatever the tag names by then. Images come through the
 * pull-through cache, as on a deployment: `public.ecr.aws/…` runs as
 * `<registry>/ecr-public/…`, ECR-hosted, so ECS reports its digest.
 */
await vi.hoisted(async () => {
  const { ecsSimSettings, simDeploySettings } = await import('../../support/ecs-settings.js');
  Object.assign(
    process.env,
    ecsSimSettings({
      ...simDeploySettings(),
      IMAGE_PULL_THROUGH_REGISTRY: '123456789012.dkr.ecr.us-east-1.amazonaws.com',
      IMAGE_PULL_THROUGH_RULES: 'public.ecr.aws=ecr-public',
    }),
  );
});

const aws = useDeploysOnEcsSim({
  seed: 33,
  minuteMs: 2000,
  // A lost RUNNING event is applied from DescribeTasks 2 s after its task started (deployed: 15 s, or the
  // readiness grace when shorter): the pin it brings is this file's, not how long the reconciler waits for it.
  lostEventMarginMs: 2000,
  // A real account, whose token the functions authenticate.
  caller: realAccount,
});
let functions: ReleaseFunctions;

beforeAll(async () => {
  functions = await releaseFunctions(aws.stack.caller, 'tag digests');
}, 60_000);

const service = () => aws.stack.parts.service;

/** The container's release `version` as its owner lists it. */
async function releaseOf(containerId: string, version: number): Promise<ReleaseView | undefined> {
  const releases = await service().listReleases(aws.stack.caller, containerId, { limit: 50 });
  return releases.items.find((release) => release.version === version);
}

/** Waits until release `version` has a digest; fails after `timeoutMs` (a release named by tag that nothing pinned). */
const pinned = (containerId: string, version: number, timeoutMs = 10_000) =>
  pollUntil(
    () => releaseOf(containerId, version),
    (release) => release?.image_digest !== null && release?.image_digest !== undefined,
    timeoutMs,
  );

/** Waits until the container runs `release` on one task, its restart (if any) over. */
const runningOn = (containerId: string, release: number) =>
  pollUntil(
    () => service().get(aws.stack.caller, containerId),
    (container) => container.state === 'running' && container.release === release && !container.pendingTaskArn,
    45_000,
  );

/** The simulator's task of the container's current task. */
async function currentTaskOf(containerId: string) {
  const container = await service().get(aws.stack.caller, containerId);
  return aws.sim.ecs.tasks.get(container.taskArn!)!;
}

/** A running container created from `image` (a tag), through the pull-through cache. */
async function runningFromTag(image: string, hostname = uniqueHostname('tagged')): Promise<string> {
  const containerId = await aws.stack.harness().create({ hostname, behaviour: {}, image });
  await runningOn(containerId, 1);
  return containerId;
}

describe('a release named by tag on the AWS simulator', () => {
  it('is pinned to the digest its task ran, and a rollback to it after the tag moved runs that digest, not the tag', async () => {
    // Prepare: release 1 runs the tag; then the tag moves upstream and a PATCH names another image (release 2)
    const image = 'public.ecr.aws/sim/pinned:1';
    const containerId = await runningFromTag(image);
    const ran = (await currentTaskOf(containerId)).imageDigest;
    expect(ran).toBe(aws.sim.ecr.upstream.digestOf(image));
    await pinned(containerId, 1);
    const moved = aws.sim.ecr.upstream.moveTag(image);
    await service().update(aws.stack.caller, containerId, { image: 'public.ecr.aws/sim/other:1' });

    // Act
    const listed = await functions.invoke(functions.listReleases, 'GET', `/api/v1/containers/${containerId}/releases`, {
      container_id: containerId,
    });
    const rolledBack = await functions.invoke(functions.rollback, 'POST', `/api/v1/containers/${containerId}/releases/1/rollback`, {
      container_id: containerId,
      version: '1',
    });
    await runningOn(containerId, 3);

    // Assess: GET releases shows release 1 pinned; the rollback's task pulled the first digest, by digest
    expect(listed.status).toBe(200);
    const first = listed.body.data.find((release: ReleaseView) => release.version === 1);
    expect(first).toMatchObject({ cause: 'create', image_digest: ran, workload: { image: `public.ecr.aws/sim/pinned@${ran}` } });
    expect(rolledBack.status).toBe(200);
    expect(rolledBack.body.data).toMatchObject({ image: `public.ecr.aws/sim/pinned@${ran}`, release: 3 });
    const task = await currentTaskOf(containerId);
    expect(task.group).toBe('release:3');
    expect(task.image).toBe(`${SIM_REGISTRY}/ecr-public/sim/pinned@${ran}`);
    expect(task.imageDigest).toBe(ran);
    expect(task.imageDigest).not.toBe(moved);
    expect((await releaseOf(containerId, 3))?.image_digest).toBe(ran);
  }, 90_000);

  it('takes a late copy of an older task’s RUNNING event into no newer release, which its own task pins', async () => {
    // Prepare: a copy of release 1's task's RUNNING event, kept back; the tag moves; a PATCH of env makes release 2 of the same tag
    const image = 'public.ecr.aws/sim/late:1';
    const hostname = uniqueHostname('late');
    const lateCopy = aws.sim.taskEvents.copyNext(
      (task) => task.lastStatus === 'RUNNING' && task.tags.some((tag) => tag.key === 'hostname' && tag.value === hostname),
    );
    const containerId = await runningFromTag(image, hostname);
    const first = (await pinned(containerId, 1))!.image_digest;
    expect(first).toBe((await currentTaskOf(containerId)).imageDigest);
    const moved = aws.sim.ecr.upstream.moveTag(image);
    await service().update(aws.stack.caller, containerId, { env: { RELEASE: 'two' } });

    // Act: the late copy arrives while release 2 is the container's (its old task runs on), then release 2 gets its own task
    const messageId = aws.sim.taskEventQueue.send(await lateCopy);
    await pollUntil(
      async () => aws.sim.taskEventQueue.messages.some((message) => message.messageId === messageId),
      (waiting) => !waiting,
      10_000,
    );
    expect(aws.sim.taskEventQueue.messages.some((message) => message.messageId === messageId)).toBe(false);
    const afterLateCopy = await releaseOf(containerId, 2);
    await service().restart(aws.stack.caller, containerId);
    await runningOn(containerId, 2);
    const second = await pinned(containerId, 2);

    // Assess
    expect(afterLateCopy?.image_digest).toBeNull();
    expect(second?.image_digest).toBe(moved);
    expect((await currentTaskOf(containerId)).imageDigest).toBe(moved);
    expect((await releaseOf(containerId, 1))?.image_digest).toBe(first);
    expect(first).not.toBe(moved);
  }, 90_000);
  it('is pinned from the reconciler’s DescribeTasks when its task’s RUNNING event was lost', async () => {
    // Prepare
    const image = 'public.ecr.aws/sim/lost:1';
    const hostname = uniqueHostname('lost');
    aws.stack.harness().loseNextRunningEvent!(hostname);

    // Act: the reconciler hands the task to the probe past its lost-event margin, as the event would have
    const containerId = await runningFromTag(image, hostname);
    const release = await pinned(containerId, 1);

    // Assess
    expect(aws.sim.faults.get('events.lost')).toBeGreaterThanOrEqual(1);
    expect(release?.image_digest).toBe(aws.sim.ecr.upstream.digestOf(image));
    expect(release?.image_digest).toBe((await currentTaskOf(containerId)).imageDigest);
  }, 90_000);
});
