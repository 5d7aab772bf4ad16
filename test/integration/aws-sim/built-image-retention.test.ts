import { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SqsBuildDeadlines } from '../../../lib/aws/sqs-build-deadlines.js';
import { config } from '../../../lib/config.js';
import type { Deploy } from '../../../lib/deploys/deploy.js';
import type { DeployService } from '../../../lib/deploys/deploy-service.js';
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
import { BUILT_IMAGES_KEPT } from '../../../infra/constructs/image-builds.js';

/*
 * Built images kept as releases need them on the AWS simulator (docs/deploys.md, "Builds on AWS"):
 * deploys as the deployed functions run them (test/integration/aws-sim/deploy-journey.test.ts),
 * the build events function tagging a deploy's image as a release's before it goes live, and the
 * simulator's ECR evaluating the repositories' lifecycle policy, read from the project's
 * buildspec, late.
 */
await vi.hoisted(async () => {
  const { ecsSimSettings, simBuildSettings } = await import('../../support/ecs-settings.js');
  Object.assign(
    process.env,
    // A simulated minute is 2 s: the 5-minute build timeout is 10 s, past any build here on a busy machine.
    ecsSimSettings({ ...simBuildSettings(), BUILD_TIMEOUT_S: '300', RESTART_DRAIN_MS: '500' }),
  );
});

let sim: AwsSim;
let stack: EcsSimStack;
let deploys: DeployService;

beforeAll(async () => {
  sim = await startAwsSim({
    port: simPortFor(process.pid),
    seed: 34,
    ecs: { provisioningMs: [100, 300], pendingMs: [100, 300], stopTimeoutMs: 1000 },
    route53: SIM_ROUTE53,
    s3: { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } },
    codebuild: { phaseMs: 20, minuteMs: 2000 },
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

    // Act: ECR evaluates the repository's lifecycle policy late, past every rule's day
    sim.ecr.evaluateLifecycle(Date.now() + 2 * 24 * 60 * 60 * 1000);
    const rolledBack = await stack.parts.service.rollback(stack.caller, containerId, first.release!).catch((error: unknown) => error);

    // Assess: the failed deploys' images went, the releases' stayed, and the rollback runs the oldest kept release
    const kept = sim.ecr.repositories.get(`builds/${stack.caller.userId}/${containerId}`)!.images.map((image) => image.digest);
    expect(kept.sort()).toEqual([first.image, second.image].map((image) => image!.split('@')[1]).sort());
    expect(rolledBack).not.toBeInstanceOf(Error);
    const after = await pollUntil(
      () => stack.parts.service.get(stack.caller, containerId),
      (container) => container.state === 'running' && container.image === first.image && !container.pendingTaskArn,
      20_000,
    );
    expect(after).toMatchObject({ state: 'running', image: first.image });
  }, 180_000);
});
