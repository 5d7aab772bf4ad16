import { afterAll, beforeAll, expect, vi } from 'vitest';
import { config } from '../../../lib/config.js';
import { type AwsSim, simPortFor, startAwsSim } from '../../support/aws-sim/index.js';
import { type EcsSimStack, SIM_ROUTE53 } from '../../support/conformance/ecs-harness.js';
import { closeEcsSim, wiredEcsSimStackWithDeploys } from '../../support/conformance/wired-ecs-stack.js';
import { describeConformance } from '../../support/conformance/journeys.js';

/*
 * The runtime conformance journeys (test/support/conformance/journeys.ts) over the ECS runtime
 * on the AWS simulator: the real SDK clients, the task state and probe functions' message
 * handlers fed from their queues with maximum concurrency, deferred work as delayed SQS
 * messages, the reconciler every 3 s, DynamoDB Local. Each task is a real listener on its own
 * loopback address.
 */
await vi.hoisted(async () => {
  const { ecsSimSettings, simBuildSettings } = await import('../../support/ecs-settings.js');
  // Builds (infra/constructs/image-builds.ts): a simulated build minute is 200 ms.
  Object.assign(process.env, ecsSimSettings(simBuildSettings()));
});

let sim: AwsSim;
let stack: EcsSimStack;

beforeAll(async () => {
  expect(config.CONTAINER_RUNTIME).toBe('ecs');
  sim = await startAwsSim({
    port: simPortFor(process.pid),
    seed: 24,
    // The simulator's own PROVISIONING and PENDING (they were [200, 600] and [300, 1200]): the journeys are timed
    // against the restart policy's backoff and the readiness probe, not ECS's start, and each of the crash loop's
    // six launches waited 1.1 s on average for those.
    ecs: { provisioningMs: [50, 150], pendingMs: [100, 300], stopTimeoutMs: 2000 },
    route53: { ...SIM_ROUTE53, requestsPerSecond: { capacity: 50, refillPerSecond: 10 } },
    s3: { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } },
    codebuild: { phaseMs: 20, minuteMs: 200 },
  });
  stack = wiredEcsSimStackWithDeploys(sim);
});

afterAll(() => closeEcsSim(stack, sim));

describeConformance('ECS on the simulator', () => stack.harness());
