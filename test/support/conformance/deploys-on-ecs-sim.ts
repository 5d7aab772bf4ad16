import { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, expect } from 'vitest';
import { SqsBuildDeadlines } from '../../../lib/aws/sqs-build-deadlines.js';
import type { Caller } from '../../../lib/containers/container.js';
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
import { reconcilerWith } from '../../../lib/wiring/reconciler.js';
import { type AwsSim, simPortFor, startAwsSim } from '../aws-sim/index.js';
import { pollUntil } from '../poll.js';
import { buildContextOf } from './build-contexts.js';
import { type EcsSimStack, SIM_ROUTE53 } from './ecs-harness.js';
import { uniqueHostname } from './journeys.js';
import { closeEcsSim, wiredEcsSimStack } from './wired-ecs-stack.js';

/*
 * Deploys from source on the AWS simulator as the deployed functions run them (docs/deploys.md,
 * "Builds on AWS"): the deploy routes' DeployService over the AWS build site with release tags,
 * its build deadlines on the build events queue, and the build events function's handler fed
 * from that queue. lib/config reads the build site's settings when this module loads, so a test
 * file sets them first, from vi.hoisted: `ecsSimSettings(simDeploySettings())`
 * (test/support/ecs-settings.ts).
 */

/** A test file's simulator, stack and deploy service: started before its first test, closed after its last. */
export interface DeploysOnEcsSim {
  readonly sim: AwsSim;
  readonly stack: EcsSimStack;
  readonly deploys: DeployService;
  /** A running container of the stack's caller. */
  runningContainer(): Promise<string>;
  /** Creates a deploy, PUTs its context to the presigned URL as a client does, and waits for it to settle. */
  deployAndWait(containerId: string, files: Record<string, string>): Promise<Deploy>;
}

/**
 * Starts the simulator (`seed`; a simulated CodeBuild minute of `minuteMs`, against which the
 * settings' 5-minute build timeout is measured) and the stack with its deploys in a beforeAll,
 * and closes them in an afterAll. `caller`: the account the stack acts as, made once the simulator
 * runs (a real one when a test calls functions with its token). `lostEventMarginMs`: how long the
 * reconciler waits for a task's lost event before it applies what DescribeTasks says (deployed: 15 s).
 */
export function useDeploysOnEcsSim(options: {
  seed: number;
  minuteMs: number;
  caller?: () => Promise<Caller>;
  lostEventMarginMs?: number;
}): DeploysOnEcsSim {
  let sim: AwsSim | undefined;
  let stack: EcsSimStack | undefined;
  let deploys: DeployService | undefined;

  beforeAll(async () => {
    sim = await startAwsSim({
      port: simPortFor(process.pid),
      seed: options.seed,
      ecs: { provisioningMs: [100, 300], pendingMs: [100, 300], stopTimeoutMs: 1000 },
      route53: SIM_ROUTE53,
      s3: { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } },
      codebuild: { phaseMs: 20, minuteMs: options.minuteMs },
    });
    const service = containerServiceWith({ runtime: containerRuntime, deferredWork });
    const site = withReleaseTags(awsBuildSiteFrom(config), 'us-east-1');
    if (!('builder' in site)) throw new Error(site.refusal);
    deploys = deployServiceWith(
      { ...site, deadlines: new SqsBuildDeadlines(new SQSClient({ region: 'us-east-1' }), config.BUILD_EVENTS_QUEUE_URL!) },
      service,
    );
    // The stack reads the build events queue into the build events function's handler, as deployed.
    stack = wiredEcsSimStack(sim, service, {
      deploys: { service: deploys, handleBuildEvent: buildEventsHandlerWith(deploys) },
      ...(options.lostEventMarginMs === undefined
        ? {}
        : {
            reconciler: reconcilerWith(containerRuntime, config, deferredWork, undefined, { lostEventMarginMs: options.lostEventMarginMs }),
          }),
      ...(options.caller ? { caller: await options.caller() } : {}),
    });
  }, 60_000);

  afterAll(() => closeEcsSim(stack, sim));

  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the simulator starts in beforeAll: read it in a hook or a test');
    return value;
  };

  return {
    get sim() {
      return started(sim);
    },
    get stack() {
      return started(stack);
    },
    get deploys() {
      return started(deploys);
    },
    async runningContainer() {
      const harness = started(stack).harness();
      const id = await harness.create({ hostname: uniqueHostname('deploy'), behaviour: {} });
      await pollUntil(
        () => harness.read(id),
        (readout) => readout?.state === 'running',
        20_000,
      );
      return id;
    },
    async deployAndWait(containerId, files) {
      const { caller } = started(stack);
      const deployService = started(deploys);
      const body = await buildContextOf(files);
      const { deploy, upload } = await deployService.create(caller, containerId, {
        sizeBytes: body.length,
        dockerfile: 'Dockerfile',
        buildArgs: {},
      });
      expect(deploy.state).toBe('waiting_for_upload');
      const put = await fetch(upload.url, { method: upload.method, headers: upload.headers, body });
      expect(put.status).toBe(200);
      return pollUntil(
        () => deployService.get(caller, containerId, deploy.id),
        (found) => ['live', 'failed', 'superseded'].includes(found.state),
        30_000,
      );
    },
  };
}
