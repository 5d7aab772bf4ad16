import { fileURLToPath } from 'node:url';
import {
  ROUTE_WRITER_BATCH_SIZE,
  ROUTE_WRITER_BATCHING_WINDOW_S,
  ROUTE_WRITER_MAX_CONCURRENCY,
} from '../../../infra/constructs/task-state-events.js';
import { probeTaskFunction, taskStateChangedFunction, writeRoutesFunction } from '../../../infra/event-functions.js';
import { runningFunction } from '../../../lib/local/running-function.js';
import type { Caller, StoredContainer } from '../../../lib/containers/container.js';
import type { ContainerService } from '../../../lib/containers/container-service.js';
import type { Reconciler } from '../../../lib/containers/reconciler.js';
import { newId } from '../../../lib/ids.js';
import type { AwsSim, SqsRecord } from '../aws-sim/index.js';
import type { EventSource } from '../aws-sim/sqs.js';
import type { Behaviour, ConformanceHarness, CreateInput, Readout } from './journeys.js';

/** Where a test file that drives the ECS stack on the simulator points the configuration (set it in vi.hoisted). */
export const ECS_SIM_ENV = {
  CONTAINER_RUNTIME: 'ecs',
  ECS_CLUSTER_ARN: 'arn:aws:ecs:us-east-1:123456789012:cluster/workloads',
  ECS_SUBNET_IDS: 'subnet-a',
  ECS_SECURITY_GROUP_IDS: 'sg-1',
  ECS_EXECUTION_ROLE_ARN: 'arn:aws:iam::123456789012:role/execution',
  ECS_LOG_GROUP: 'workload-logs',
  APPS_DNS_ZONE_ID: 'ZSIM',
  APPS_DNS_ZONE_NAME: 'apps.internal',
  RESTART_DRAIN_MS: '1000',
  START_BUDGET_MS: '20000',
};

export const SIM_ROUTE53 = { zoneId: 'ZSIM', zoneName: 'apps.internal' };

/** The environment a behaviour becomes for task-app.mjs. */
export function simEnv(behaviour: Behaviour): Record<string, string> {
  const env: Record<string, string> = {};
  if (behaviour.listenAfterMs !== undefined) env.SIM_LISTEN_AFTER_MS = String(behaviour.listenAfterMs);
  if (behaviour.neverListen) env.SIM_NEVER_LISTEN = 'true';
  if (behaviour.exitAfterMs !== undefined) env.SIM_EXIT_AFTER_MS = String(behaviour.exitAfterMs);
  if (behaviour.exitCode !== undefined) env.SIM_EXIT_CODE = String(behaviour.exitCode);
  if (behaviour.healthStatus !== undefined) env.SIM_HEALTH_STATUS = String(behaviour.healthStatus);
  if (behaviour.oomAfterMs !== undefined) env.SIM_OOM_AFTER_MS = String(behaviour.oomAfterMs);
  if (behaviour.body !== undefined) env.SIM_BODY = behaviour.body;
  return env;
}

export const TASK_APP_PATH = fileURLToPath(new URL('../aws-sim/task-app.mjs', import.meta.url));

export interface EcsStackParts {
  sim: AwsSim;
  service: ContainerService;
  /** More API function instances, each with its own ECS runtime (and so its own task definition cache). */
  moreServices?: ContainerService[];
  reconciler: Reconciler;
  /** The task state function's handler of one task-events message (lib/wiring/task-events.ts). */
  taskEvent: (body: string) => Promise<unknown>;
  /** The probe function's handler of one task-probes message. */
  probe: (body: string) => Promise<unknown>;
  /** The zone's writer's handler of one batch of route-changes messages (lib/wiring/route-writer.ts). */
  writeRoutes: (messages: Array<{ messageId: string; body: string }>) => Promise<unknown>;
}

/** The route writer's event source as the stack deploys it (infra/constructs/task-state-events.ts). */
export const ROUTE_WRITER_SOURCE = {
  batchSize: ROUTE_WRITER_BATCH_SIZE,
  batchingWindowMs: ROUTE_WRITER_BATCHING_WINDOW_S * 1000,
  maxConcurrency: ROUTE_WRITER_MAX_CONCURRENCY,
};

/**
 * The AWS stack on the simulator, in this process: the container service over DynamoDB Local
 * and the ECS runtime (its real SDK client reaching the simulator), the task state function and
 * the probe function fed from their queues (task-events, task-probes) by event sources with
 * maximum concurrency, deferred work sent to those queues by the real SQS client, and the
 * reconciler on an interval.
 */
export class EcsSimStack {
  readonly source: EventSource;
  readonly probeSource: EventSource;
  readonly routeSource: EventSource;
  private readonly timer: NodeJS.Timeout;
  private reconciling?: Promise<unknown>;
  readonly hostnames = new Map<string, string>();
  reconcileRuns = 0;
  reconcileErrors = 0;
  /** How long each reconciler run took, ms (finished runs, failed ones too). */
  readonly reconcileMs: number[] = [];
  handlerErrors = 0;

  constructor(
    readonly parts: EcsStackParts,
    readonly caller: Caller = { userId: newId(), role: 'user' },
    options: { maxConcurrency?: number; reconcileEveryMs?: number; invocationMs?: number } = {},
  ) {
    const invocationMs = options.invocationMs ?? 20_000;
    const counted = (handle: (body: string) => Promise<unknown>) => (record: SqsRecord) =>
      handle(record.body).catch((error) => {
        this.handlerErrors += 1;
        throw error;
      });
    const sourceOptions = { maxConcurrency: options.maxConcurrency ?? 10, visibilityTimeoutMs: invocationMs + 1000, maxReceiveCount: 10 };
    // Each function runs as itself: every table request it makes is checked against its grant (test/support/table-access-recorder.ts).
    const asFunction = (id: string, handle: (body: string) => Promise<unknown>) => (body: string) =>
      runningFunction.run(id, () => handle(body));
    this.source = parts.sim.subscribe(
      parts.sim.taskEventQueue,
      counted(asFunction(taskStateChangedFunction.id, parts.taskEvent)),
      sourceOptions,
    );
    this.probeSource = parts.sim.subscribe(
      parts.sim.sqs.queue('task-probes'),
      counted(asFunction(probeTaskFunction.id, parts.probe)),
      sourceOptions,
    );
    // A failed batch is delivered again whole, as the writer's handler reports it (functions/containers/write-routes.ts).
    this.routeSource = parts.sim.subscribeBatches(
      parts.sim.sqs.queue('route-changes'),
      (records) =>
        runningFunction
          .run(writeRoutesFunction.id, () => parts.writeRoutes(records.map(({ messageId, body }) => ({ messageId, body }))))
          .then(
            (outcome) => ({
              batchItemFailures: ((outcome as { failedMessageIds?: string[] }).failedMessageIds ?? []).map((itemIdentifier) => ({
                itemIdentifier,
              })),
            }),
            () => {
              this.handlerErrors += 1;
              return { batchItemFailures: records.map(({ messageId }) => ({ itemIdentifier: messageId })) };
            },
          ),
      { ...ROUTE_WRITER_SOURCE, visibilityTimeoutMs: invocationMs + 1000, maxReceiveCount: 10 },
    );
    this.timer = setInterval(() => {
      if (this.reconciling) return;
      const started = Date.now();
      this.reconciling = parts.reconciler
        .run({ deadline: Date.now() + 20_000 })
        .then(
          () => void (this.reconcileRuns += 1),
          () => void (this.reconcileErrors += 1),
        )
        .finally(() => {
          this.reconcileMs.push(Date.now() - started);
          this.reconciling = undefined;
        });
    }, options.reconcileEveryMs ?? 3_000);
  }

  get settleMs(): number {
    return 3_000;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.reconciling;
    await this.source.close();
    await this.probeSource.close();
    await this.routeSource.close();
  }

  /** An HTTP GET to the container through its route, as the proxy reaches it: a random one of its hostname's task records. */
  async answer(hostname: string): Promise<number> {
    const routes = this.parts.sim.route53.routes().filter((route) => route.hostname === hostname && route.ip);
    if (routes.length === 0) return 503;
    const route = routes[Math.floor(Math.random() * routes.length)]!;
    try {
      const response = await fetch(`http://${route.ip}:8080/`, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      return response.status;
    } catch {
      return 502;
    }
  }

  /** The journeys' view of the stack, through API function instance `instance` (0: `service`). */
  harness(instance = 0): ConformanceHarness {
    const { sim } = this.parts;
    const service = instance === 0 ? this.parts.service : this.parts.moreServices![instance - 1]!;
    const readout = (container: StoredContainer): Readout => ({
      state: container.state,
      state_reason: container.stateReason,
      restart_count: container.restartCount,
    });
    return {
      settleMs: this.settleMs,
      create: async (input: CreateInput) => {
        const container = await service.create(this.caller, {
          hostname: input.hostname,
          image: input.image ?? 'sim/app:1',
          port: 8080,
          env: simEnv(input.behaviour),
          command: null,
          cpuCores: 1,
          memoryMb: input.memory_mb ?? 2048,
          diskGb: 20,
          healthCheck: input.health_check
            ? {
                path: input.health_check.path,
                intervalS: input.health_check.interval_s ?? 10,
                timeoutS: input.health_check.timeout_s ?? 2,
                graceS: input.health_check.grace_s ?? 60,
              }
            : null,
          restartPolicy: input.restart_policy ?? 'on-failure',
        });
        this.hostnames.set(container.id, input.hostname);
        return container.id;
      },
      read: async (id) => {
        try {
          return readout(await service.get(this.caller, id));
        } catch (error) {
          if ((error as { statusCode?: number }).statusCode === 404) return undefined;
          throw error;
        }
      },
      start: async (id) => readout(await service.start(this.caller, id)),
      stop: async (id) => readout(await service.stop(this.caller, id)),
      restart: async (id) => readout(await service.restart(this.caller, id)),
      remove: (id) => service.delete(this.caller, id),
      answer: (id) => this.answer(this.hostnames.get(id) ?? ''),
      loseNextRunningEvent: (hostname) =>
        sim.taskEvents.loseNext(
          (task) => task.lastStatus === 'RUNNING' && task.tags.some((tag) => tag.key === 'hostname' && tag.value === hostname),
        ),
      leftovers: async (id) => {
        const left: string[] = [];
        for (const task of sim.ecs.tasks.values()) {
          if (task.startedBy !== id) continue;
          if (task.process && !task.process.exited) left.push(`task ${task.taskId}: its container still runs`);
          else if (task.lastStatus !== 'STOPPED') left.push(`task ${task.taskId}: ${task.lastStatus}`);
        }
        for (const route of sim.route53.routes()) if (route.containerId === id) left.push(`route ${route.hostname} → ${route.ip}`);
        try {
          await service.get(this.caller, id);
          left.push('its record');
        } catch {
          // Gone, as it should be.
        }
        return left;
      },
    };
  }
}
