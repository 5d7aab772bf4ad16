import { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SqsBuildDeadlines } from '../../../lib/aws/sqs-build-deadlines.js';
import { config } from '../../../lib/config.js';
import type { Deploy } from '../../../lib/deploys/deploy.js';
import type { DeployService } from '../../../lib/deploys/deploy-service.js';
import { newId } from '../../../lib/ids.js';
import { awsBuildSiteFrom } from '../../../lib/wiring/aws/build-site.js';
import { withReleaseTags } from '../../../lib/wiring/aws/built-images.js';
import { buildEventsHandlerWith } from '../../../lib/wiring/build-events.js';
import { containerRuntime } from '../../../lib/wiring/container-runtime.js';
import { containerServiceWith } from '../../../lib/wiring/containers.js';
import { deferredWork } from '../../../lib/wiring/deferred-work.js';
import { deployServiceWith } from '../../../lib/wiring/deploys.js';
import { type AwsSim, simPortFor, startAwsSim } from '../../support/aws-sim/index.js';
import { type EcsSimStack, SIM_ROUTE53 } from '../../support/conformance/ecs-harness.js';
import { closeEcsSim, wiredEcsSimStack } from '../../support/conformance/wired-ecs-stack.js';
import { uniqueHostname } from '../../support/conformance/journeys.js';
import { pollUntil } from '../../support/poll.js';
import { buildContextOf } from '../../support/conformance/build-contexts.js';

/*
 * A deploy from source on the AWS simulator, as the deployed functions do it: the deploy routes'
 * DeployService over the AWS build site (presigned S3 PUT, CodeBuild, the build log), the context
 * bucket's Object Created event and CodeBuild's state changes through the build events queue to
 * the build events function's handler, the built image going live through the ECS runtime's
 * restart, and the later look at a build whose events were lost.
 */
await vi.hoisted(async () => {
  const { ecsSimSettings, simBuildSettings } = await import('../../support/ecs-settings.js');
  Object.assign(
    process.env,
    // A simulated minute is 200 ms: the 5-minute build timeout is a second.
    ecsSimSettings({ ...simBuildSettings(), BUILD_TIMEOUT_S: '300', RESTART_DRAIN_MS: '500' }),
  );
});

let sim: AwsSim;
let stack: EcsSimStack;
let deploys: DeployService;

beforeAll(async () => {
  sim = await startAwsSim({
    port: simPortFor(process.pid),
    seed: 33,
    ecs: { provisioningMs: [100, 300], pendingMs: [100, 300], stopTimeoutMs: 1000 },
    route53: SIM_ROUTE53,
    s3: { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } },
    codebuild: { phaseMs: 20, minuteMs: 200 },
  });
  const service = containerServiceWith({ runtime: containerRuntime, deferredWork });
  stack = wiredEcsSimStack(sim, service);
  const site = withReleaseTags(awsBuildSiteFrom(config), 'us-east-1');
  if (!('builder' in site)) throw new Error(site.refusal);
  deploys = deployServiceWith(
    { ...site, deadlines: new SqsBuildDeadlines(new SQSClient({ region: 'us-east-1' }), config.BUILD_EVENTS_QUEUE_URL!) },
    service,
  );
  const handleBuildEvent = buildEventsHandlerWith(deploys);
  sim.subscribe(sim.buildEventQueue, (record) => handleBuildEvent(record.body), {
    batchSize: 1,
    batchingWindowMs: 0,
    maxConcurrency: 5,
    visibilityTimeoutMs: 180_000,
    maxReceiveCount: 5,
  });
}, 60_000);

afterAll(() => closeEcsSim(stack, sim));

/** A running container of the harness's caller. */
async function runningContainer(): Promise<string> {
  const harness = stack.harness();
  const id = await harness.create({ hostname: uniqueHostname('deploy'), behaviour: {} });
  await pollUntil(
    () => harness.read(id),
    (readout) => readout?.state === 'running',
    20_000,
  );
  return id;
}

/** Creates a deploy, PUTs its context to the presigned URL as a client does, and waits for it to settle. */
async function deployAndWait(containerId: string, files: Record<string, string>): Promise<Deploy> {
  const body = await buildContextOf(files);
  const { deploy, upload } = await deploys.create(stack.caller, containerId, {
    sizeBytes: body.length,
    dockerfile: 'Dockerfile',
    buildArgs: {},
  });
  expect(deploy.state).toBe('waiting_for_upload');
  const put = await fetch(upload.url, { method: upload.method, headers: upload.headers, body });
  expect(put.status).toBe(200);
  return pollUntil(
    () => deploys.get(stack.caller, containerId, deploy.id),
    (found) => ['live', 'failed', 'superseded'].includes(found.state),
    30_000,
  );
}

describe('a deploy from source on the AWS simulator', () => {
  it('builds the uploaded context on CodeBuild and goes live as a new release pinned by its ECR digest', async () => {
    const containerId = await runningContainer();
    const before = await stack.parts.service.get(stack.caller, containerId);

    const deploy = await deployAndWait(containerId, { Dockerfile: 'FROM scratch\nCOPY app /app\n', app: 'v2' });
    const after = await stack.parts.service.get(stack.caller, containerId);

    expect(deploy).toMatchObject({ state: 'live', release: (before.release ?? 1) + 1 });
    expect(deploy.image).toMatch(
      new RegExp(
        `^123456789012\\.dkr\\.ecr\\.us-east-1\\.amazonaws\\.com/builds/${stack.caller.userId}/${containerId}@sha256:[0-9a-f]{64}$`,
      ),
    );
    expect(after).toMatchObject({ image: deploy.image, release: deploy.release });
    // The context is gone once built.
    expect([...sim.s3.objects.keys()].filter((key) => key.includes(deploy.id))).toEqual([]);
  }, 60_000);

  it('ends a failing RUN step failed with the step and its code, the container keeping its release', async () => {
    const containerId = await runningContainer();
    const before = await stack.parts.service.get(stack.caller, containerId);

    const deploy = await deployAndWait(containerId, { Dockerfile: 'FROM scratch\nRUN exit 3\n' });
    const after = await stack.parts.service.get(stack.caller, containerId);

    expect(deploy).toMatchObject({ state: 'failed', stateReason: 'step 2/2 `RUN exit 3` exited with code 3', image: null });
    expect(after).toMatchObject({ state: 'running', image: before.image, release: before.release });
  }, 60_000);

  it('recovers a build whose every event after the start was lost: the later look asks CodeBuild and goes live', async () => {
    const containerId = await runningContainer();
    sim.codebuild.eventFaults = { lose: (build) => build.currentPhase !== 'QUEUED' };
    try {
      // The later look comes at the timeout and a minute's grace: 5 simulated minutes are a second, the grace 60 s.
      const body = await buildContextOf({ Dockerfile: 'FROM scratch\n' });
      const { deploy, upload } = await deploys.create(stack.caller, containerId, {
        sizeBytes: body.length,
        dockerfile: 'Dockerfile',
        buildArgs: {},
      });
      await fetch(upload.url, { method: upload.method, headers: upload.headers, body });
      const building = await pollUntil(
        () => deploys.get(stack.caller, containerId, deploy.id),
        (found) => found.buildId !== null,
        10_000,
      );
      await pollUntil(
        async () => sim.codebuild.lostEvents.some((event) => event.startsWith(`${building.buildId} SUCCEEDED`)),
        Boolean,
        10_000,
      );
      expect((await deploys.get(stack.caller, containerId, deploy.id)).state).toBe('building');

      // The delayed message is due after BUILD_TIMEOUT_S + 60 s; the test asks as it would arrive.
      const outcome = await deploys.checkBuild({ accountId: stack.caller.userId, containerId, deployId: deploy.id });

      expect(outcome).toBe('live');
      expect(await deploys.get(stack.caller, containerId, deploy.id)).toMatchObject({ state: 'live' });
    } finally {
      sim.codebuild.eventFaults = {};
    }
  }, 60_000);

  it('answers another account 404 for the deploys and the logs of a container it does not own', async () => {
    const containerId = await runningContainer();
    const deploy = await deployAndWait(containerId, { Dockerfile: 'FROM scratch\n' });
    const stranger = { userId: newId(), role: 'user' as const };

    await expect(deploys.get(stranger, containerId, deploy.id)).rejects.toMatchObject({ statusCode: 404 });
    await expect(deploys.logs(stranger, containerId, deploy.id, { limit: 10 })).rejects.toMatchObject({ statusCode: 404 });
    await expect(deploys.list(stranger, containerId, { limit: 10 })).rejects.toMatchObject({ statusCode: 404 });
  }, 60_000);
});
