import { afterAll, beforeAll } from 'vitest';
import { config } from '../../../lib/config.js';
import type { Caller, StoredContainer } from '../../../lib/containers/container.js';
import type { ContainerService } from '../../../lib/containers/container-service.js';
import type { Reconciler } from '../../../lib/containers/reconciler.js';
import type { ContainerRuntime } from '../../../lib/containers/runtime.js';
import { newId } from '../../../lib/ids.js';
import type { VolumeBackend } from '../../../lib/volumes/volume-backend.js';
import type { VolumeService } from '../../../lib/volumes/volume-service.js';
import { containerRuntime } from '../../../lib/wiring/container-runtime.js';
import { containerServiceWith } from '../../../lib/wiring/containers.js';
import { deferredWork } from '../../../lib/wiring/deferred-work.js';
import type { taskMessageHandlersWith } from '../../../lib/wiring/task-events.js';
import { volumeServiceWith } from '../../../lib/wiring/volumes.js';
import { type AwsSim, type AwsSimOptions, simPortFor, startAwsSim } from '../aws-sim/index.js';
import { pollUntil } from '../poll.js';
import { simWorkload } from '../workloads.js';
import { type EcsSimStack, SIM_ROUTE53 } from './ecs-harness.js';
import { closeEcsSim, wiredEcsSimStack } from './wired-ecs-stack.js';

/*
 * Volumes on the AWS simulator through the services the API's functions call: the volume service
 * over DynamoDB Local with the EFS backend a test names (as the function under test resolves it),
 * the container service with the ECS runtime, the task state and probe functions fed from their
 * queues, the reconciler. lib/config reads the file system's settings when this module loads, so a
 * test file sets them first, from vi.hoisted: `ecsSimSettings(simEfsSettings(rolePrefix))`
 * (test/support/ecs-settings.ts).
 */

/**
 * How long a new volume's role stays invisible to ECS in these files: shorter than the simulator's 2 s
 * (ROLE_PROPAGATION_MS), which made every first task of a new volume, its container's or its chore's,
 * wait out two refused RunTasks (1 s, then 2 s: ROLE_PROPAGATION_WAITS_MS) that none of these files is
 * about. efs-volumes.test.ts is the file about that refusal and the retries that outlast it.
 */
export const VOLUME_ROLE_PROPAGATION_MS = 200;

/**
 * A task's PROVISIONING and PENDING here, each a random time in the range: the simulator's own
 * defaults. No file on these volumes is about how long a task takes to start (Fargate's tens of seconds
 * are modelled nowhere), and each of its journeys starts several tasks (a container, a chore, a
 * restore, a reader) one after another: the 0.9 s a start took on average with [200, 500] and
 * [300, 800] was waiting that tested nothing.
 */
const VOLUME_TASK_PROVISIONING_MS: [number, number] = [50, 150];
const VOLUME_TASK_PENDING_MS: [number, number] = [100, 300];

/** A caller of an account of its own. */
export const newUser = (): Caller => ({ userId: newId(), role: 'user' });

/**
 * The functions a test runs as deployed: the volume backend, and the container runtime, the task
 * state and probe functions' handlers and the reconciler (by default the wiring's own).
 */
export interface VolumeFunctions {
  backend: VolumeBackend;
  runtime?: ContainerRuntime;
  handlers?: ReturnType<typeof taskMessageHandlersWith>;
  reconciler?: Reconciler;
}

/** A test file's simulator, stack, container and volume services: started before its first test, closed after its last. */
export interface VolumesOnEcsSim {
  readonly sim: AwsSim;
  readonly stack: EcsSimStack;
  readonly containers: ContainerService;
  readonly volumes: VolumeService;
  /** What a container of the simulator's task app asks for, with `mounts`, under a hostname of its own. */
  workload<M>(mounts: M): ReturnType<typeof simWorkload<M>>;
  /** The container once it is running or failed (40 s at the most). */
  running(caller: Caller, id: string): Promise<StoredContainer>;
  /** A request to the app through its published route, as the proxy sends it, of 2 s unless `init` has a signal; undefined when no task answers. */
  toApp(hostname: string, path: string, init?: RequestInit): Promise<{ status: number; body: string } | undefined>;
}

/**
 * Starts the simulator (`seed`, the EFS role boundary from the settings, `more` of its options) in a
 * beforeAll, then the functions `functions()` makes and the stack around them, and closes them in an
 * afterAll. Workloads' hostnames start with `hostnamePrefix`.
 */
export function useVolumesOnEcsSim(options: {
  seed: number;
  hostnamePrefix: string;
  more?: Pick<AwsSimOptions, 's3' | 'taskEvents' | 'logs'>;
  functions: () => VolumeFunctions;
}): VolumesOnEcsSim {
  let sim: AwsSim | undefined;
  let stack: EcsSimStack | undefined;
  let containers: ContainerService | undefined;
  let volumes: VolumeService | undefined;

  beforeAll(async () => {
    sim = await startAwsSim({
      port: simPortFor(process.pid),
      seed: options.seed,
      ecs: { provisioningMs: VOLUME_TASK_PROVISIONING_MS, pendingMs: VOLUME_TASK_PENDING_MS, stopTimeoutMs: 2000 },
      route53: SIM_ROUTE53,
      iam: { requiredBoundaryArn: config.EFS_VOLUME_ROLE_BOUNDARY_ARN, propagationMs: VOLUME_ROLE_PROPAGATION_MS },
      ...options.more,
    });
    const { backend, runtime, handlers, reconciler } = options.functions();
    containers = containerServiceWith({ runtime: runtime ?? containerRuntime, deferredWork });
    volumes = volumeServiceWith(backend);
    stack = wiredEcsSimStack(sim, containers, { handlers, reconciler });
  }, 30_000);

  afterAll(() => closeEcsSim(stack, sim));

  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the simulator starts in beforeAll: read it in a hook or a test');
    return value;
  };
  let workloads = 0;

  return {
    get sim() {
      return started(sim);
    },
    get stack() {
      return started(stack);
    },
    get containers() {
      return started(containers);
    },
    get volumes() {
      return started(volumes);
    },
    workload: (mounts) => simWorkload(`${options.hostnamePrefix}-${process.pid}-${(workloads += 1)}`, mounts),
    running: (caller, id) =>
      pollUntil(
        () => started(containers).get(caller, id),
        (container) => container.state === 'running' || container.state === 'failed',
        40_000,
      ),
    async toApp(hostname, path, init = {}) {
      const route = started(sim)
        .route53.routes()
        .find((candidate) => candidate.hostname === hostname && candidate.ip);
      if (!route) return undefined;
      try {
        const response = await fetch(`http://${route.ip}:8080${path}`, { signal: AbortSignal.timeout(2000), ...init });
        return { status: response.status, body: await response.text() };
      } catch {
        return undefined;
      }
    },
  };
}
