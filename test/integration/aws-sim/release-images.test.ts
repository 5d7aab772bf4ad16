import { beforeAll, describe, expect, it, vi } from 'vitest';
import { BUILT_IMAGES_KEPT } from '../../../infra/constructs/image-builds.js';
import type { Deploy } from '../../../lib/deploys/deploy.js';
import { SIM_REGISTRY } from '../../support/aws-sim/ecr.js';
import { uniqueHostname } from '../../support/conformance/journeys.js';
import { useDeploysOnEcsSim } from '../../support/conformance/deploys-on-ecs-sim.js';
import { pollUntil } from '../../support/poll.js';
import { realAccount, type ReleaseFunctions, releaseFunctions } from '../../support/release-functions.js';

/*
 * Releases' images on the AWS simulator (docs/deploys.md, "Retention"): after ECR's lifecycle
 * policy, evaluated late, expired the image of an old release, the list and rollback functions
 * (functions/containers/list-releases.ts, rollback.ts, as Lambda runs them) ask ECR whether each
 * release's built image is still there (DescribeImages), say so in `image_available`, and refuse a
 * rollback to the pruned one with 409.
 */
await vi.hoisted(async () => {
  const { ecsSimSettings, simBuildSettings } = await import('../../support/ecs-settings.js');
  Object.assign(process.env, ecsSimSettings({ ...simBuildSettings(), BUILD_TIMEOUT_S: '300', RESTART_DRAIN_MS: '500' }));
});

const aws = useDeploysOnEcsSim({
  seed: 35,
  minuteMs: 2000,
  // A real account, whose token the functions authenticate.
  caller: realAccount,
});
let functions: ReleaseFunctions;

beforeAll(async () => {
  functions = await releaseFunctions(aws.stack.caller, 'releases');
}, 60_000);

/** A deploy of a context whose one file says `app`. */
const deployAndWait = (containerId: string, app: string): Promise<Deploy> =>
  aws.deployAndWait(containerId, { Dockerfile: 'FROM scratch\nCOPY app /app\n', app });

/** A stopped container (a deploy goes live at once, for its next start) with one live deploy more than the policy keeps, and the policy evaluated late. */
async function containerWithAPrunedRelease() {
  const harness = aws.stack.harness();
  const containerId = await harness.create({ hostname: uniqueHostname('releases'), behaviour: {} });
  await pollUntil(
    () => harness.read(containerId),
    (readout) => readout?.state === 'running',
    20_000,
  );
  await aws.stack.parts.service.stop(aws.stack.caller, containerId);
  const live: Deploy[] = [];
  for (let count = 0; count <= BUILT_IMAGES_KEPT; count += 1) {
    const deploy = await deployAndWait(containerId, `app ${count} ${containerId}`);
    expect(deploy.state, deploy.stateReason ?? '').toBe('live');
    live.push(deploy);
  }
  aws.sim.ecr.evaluateLifecycle(Date.now() + 2 * 24 * 60 * 60 * 1000);
  const repositoryName = `builds/${aws.stack.caller.userId}/${containerId}`;
  const [pruned, ...kept] = live;
  expect(aws.sim.ecr.expired.filter((image) => image.repository === repositoryName).map((image) => image.digest)).toEqual([
    pruned!.image!.split('@')[1],
  ]);
  return { containerId, repositoryName, live, pruned: pruned!, kept };
}

/** DescribeImages of a deploy's image by its digest, in its container's repository, as ECR sees the call. */
const describedByDigest = (repositoryName: string, deploy: Deploy) => ({
  action: 'DescribeImages',
  input: { registryId: '123456789012', repositoryName, imageIds: [{ imageDigest: deploy.image!.split('@')[1] }] },
});

const rollbackTo = (containerId: string, version: number) =>
  functions.invoke(functions.rollback, 'POST', `/api/v1/containers/${containerId}/releases/${version}/rollback`, {
    container_id: containerId,
    version: String(version),
  });

describe("releases' images on the AWS simulator", () => {
  let prepared: Awaited<ReturnType<typeof containerWithAPrunedRelease>>;

  beforeAll(async () => {
    prepared = await containerWithAPrunedRelease();
  }, 180_000);

  it('lists the release whose image the lifecycle policy expired as image_available false, the kept ones true, asking ECR once each', async () => {
    // Prepare
    const { containerId, repositoryName, live, pruned, kept } = prepared;
    const from = aws.sim.ecr.calls.length;

    // Act
    const listed = await functions.invoke(functions.listReleases, 'GET', `/api/v1/containers/${containerId}/releases`, {
      container_id: containerId,
    });

    // Assess: the create's image (not one of this service's builds) is not ECR's to judge
    expect(listed.status).toBe(200);
    const availability = new Map<number, boolean | null>(
      listed.body.data.map((release: { version: number; image_available: boolean | null }) => [release.version, release.image_available]),
    );
    expect(availability.get(pruned.release!)).toBe(false);
    for (const deploy of kept) expect(availability.get(deploy.release!), `release ${deploy.release}`).toBe(true);
    expect(availability.get(1)).toBeNull();
    const calls = aws.sim.ecr.calls.slice(from);
    expect(calls).toHaveLength(live.length);
    expect(calls).toEqual(expect.arrayContaining(live.map((deploy) => describedByDigest(repositoryName, deploy))));
  }, 60_000);

  it('refuses a rollback to the release whose image was expired with 409 naming the image, and changes nothing', async () => {
    // Prepare
    const { containerId, repositoryName, pruned } = prepared;
    const before = await aws.stack.parts.service.get(aws.stack.caller, containerId);
    const from = aws.sim.ecr.calls.length;

    // Act
    const refused = await rollbackTo(containerId, pruned.release!);

    // Assess
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('CONFLICT');
    expect(pruned.image!.startsWith(`${SIM_REGISTRY}/${repositoryName}@sha256:`)).toBe(true);
    expect(refused.body.error.message).toContain(pruned.image);
    expect(aws.sim.ecr.calls.slice(from)).toEqual([describedByDigest(repositoryName, pruned)]);
    const after = await aws.stack.parts.service.get(aws.stack.caller, containerId);
    expect({ release: after.release, image: after.image, version: after.version }).toEqual({
      release: before.release,
      image: before.image,
      version: before.version,
    });
  }, 60_000);

  it('rolls back to the oldest kept release, whose image ECR still has', async () => {
    // Prepare
    const { containerId, repositoryName, kept } = prepared;
    const before = await aws.stack.parts.service.get(aws.stack.caller, containerId);
    const from = aws.sim.ecr.calls.length;

    // Act
    const accepted = await rollbackTo(containerId, kept[0]!.release!);

    // Assess: a new release running that image, at the container's next start
    expect(accepted.status).toBe(200);
    expect(accepted.body.data).toMatchObject({ image: kept[0]!.image, release: before.release! + 1 });
    expect(aws.sim.ecr.calls.slice(from)).toEqual([describedByDigest(repositoryName, kept[0]!)]);
  }, 60_000);
});
