import { fileURLToPath } from 'node:url';
import {
  buildStatusChangedFunction,
  probeTaskFunction,
  taskStateChangedFunction,
  writeRoutesFunction,
} from '../../../infra/event-functions.js';
import { runningFunction } from '../../../lib/local/running-function.js';
import type { Caller, StoredContainer } from '../../../lib/containers/container.js';
import type { ContainerService } from '../../../lib/containers/container-service.js';
import type { Reconciler } from '../../../lib/containers/reconciler.js';
import { newId } from '../../../lib/ids.js';
import type { AwsSim, SqsRecord } from '../aws-sim/index.js';
import type { BatchResponse, EventSource } from '../aws-sim/sqs.js';
import { DEPLOYED_EVENT_SOURCES } from '../deployed-event-sources.js';
import type { Behaviour, ConformanceHarness, CreateInput, Readout } from './journeys.js';
import type { DeployService } from '../../../lib/deploys/deploy-service.js';
import { HttpError } from '../../../lib/errors.js';
import { buildContextOf, SETTLED_DEPLOY_STATES } from './build-contexts.js';
import { pollUntil } from '../poll.js';

export { SIM_ROUTE53 } from '../ecs-settings.js';

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

/** One invocation of a function on one of its instances: `run` handles the invocation's batch with the instance's handler of one message. */
export type Invocation = <R>(run: (handle: (body: string) => Promise<unknown>) => Promise<R>) => Promise<R>;

/** Every invocation on the one instance whose handler of one message is `handle`. */
export const onOneInstance =
  (handle: (body: string) => Promise<unknown>): Invocation =>
  (run) =>
    run(handle);

export interface EcsStackParts {
  sim: AwsSim;
  service: ContainerService;
  /** More API function instances, each with its own ECS runtime (and so its own task definition cache). */
  moreServices?: ContainerService[];
  reconciler: Reconciler;
  /** One invocation of the task state function, whose handler of one task-events message (lib/wiring/task-events.ts) `run` gets. */
  taskStateInvocation: Invocation;
  /** One invocation of the probe function, whose handler of one task-probes message `run` gets. */
  probeInvocation: Invocation;
  /** The zone's writer's handler of one batch of route-changes messages (lib/wiring/route-writer.ts). */
  writeRoutes: (messages: Array<{ messageId: string; body: string }>) => Promise<unknown>;
  /** The deploy routes' service over the AWS build site, and the build events function's handler of one message. */
  deploys?: { service: DeployService; handleBuildEvent: (body: string) => Promise<unknown> };
}

/** The records of a batch whose handling threw, as a function with ReportBatchItemFailures answers them. */
function failuresOf(records: SqsRecord[], outcomes: PromiseSettledResult<unknown>[]): BatchResponse {
  return {
    batchItemFailures: records
      .filter((_, index) => outcomes[index]!.status === 'rejected')
      .map(({ messageId }) => ({ itemIdentifier: messageId })),
  };
}

/** A batch handled one record after another, as the task state function does (functions/containers/task-state-changed.ts). */
async function inTurn(records: SqsRecord[], handle: (record: SqsRecord) => Promise<unknown>): Promise<BatchResponse> {
  const outcomes: PromiseSettledResult<unknown>[] = [];
  for (const record of records) {
    try {
      outcomes.push({ status: 'fulfilled', value: await handle(record) });
    } catch (reason) {
      outcomes.push({ status: 'rejected', reason });
    }
  }
  return failuresOf(records, outcomes);
}

/** A batch handled side by side, as the probe function does (functions/containers/probe-task.ts). */
async function sideBySide(records: SqsRecord[], handle: (record: SqsRecord) => Promise<unknown>): Promise<BatchResponse> {
  return failuresOf(records, await Promise.allSettled(records.map(handle)));
}

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
  readonly buildSource?: EventSource;
  private readonly timer: NodeJS.Timeout;
  private reconciling?: Promise<unknown>;
  readonly hostnames = new Map<string, string>();
  reconcileRuns = 0;
  reconcileErrors = 0;
  /** How long each reconciler run took, ms (finished runs, failed ones too). */
  readonly reconcileMs: number[] = [];
  /** The slowest run's time per part (ReconcileReport.partMs): which part held it past its deadline. */
  slowestReconcile: { ms: number; partMs: Record<string, number> } | undefined;
  handlerErrors = 0;

  constructor(
    readonly parts: EcsStackParts,
    readonly caller: Caller = { userId: newId(), role: 'user' },
    options: { reconcileEveryMs?: number } = {},
  ) {
    // One invocation's batch, each record's handling as its function runs it (checked against its grant by
    // test/support/table-access-recorder.ts) and counted when it throws.
    const handledAs =
      (functionId: string, invocation: Invocation, handleBatch: typeof inTurn) =>
      (records: SqsRecord[]): Promise<BatchResponse> =>
        invocation((handle) =>
          handleBatch(records, (record) =>
            runningFunction
              .run(functionId, () => handle(record.body))
              .catch((error) => {
                this.handlerErrors += 1;
                throw error;
              }),
          ),
        );
    // Each queue is read as deployed: its batches, concurrency, visibility timeout and receives before the dead-letter queue.
    this.source = parts.sim.subscribeBatches(
      parts.sim.taskEventQueue,
      handledAs(taskStateChangedFunction.id, parts.taskStateInvocation, inTurn),
      DEPLOYED_EVENT_SOURCES.taskEvents,
    );
    this.probeSource = parts.sim.subscribeBatches(
      parts.sim.sqs.queue('task-probes'),
      handledAs(probeTaskFunction.id, parts.probeInvocation, sideBySide),
      DEPLOYED_EVENT_SOURCES.probes,
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
      DEPLOYED_EVENT_SOURCES.routeChanges,
    );
    // The build events queue (S3 uploads, CodeBuild state changes, later looks) → the build events function.
    if (parts.deploys) {
      const { handleBuildEvent } = parts.deploys;
      // A batch handled one record after another, as the build events function does (functions/deploys/build-status-changed.ts).
      this.buildSource = parts.sim.subscribeBatches(
        parts.sim.buildEventQueue,
        handledAs(buildStatusChangedFunction.id, onOneInstance(handleBuildEvent), inTurn),
        DEPLOYED_EVENT_SOURCES.buildEvents,
      );
    }
    this.timer = setInterval(() => {
      if (this.reconciling) return;
      const started = Date.now();
      this.reconciling = parts.reconciler
        .run({ deadline: Date.now() + 20_000 })
        .then(
          (report) => {
            this.reconcileRuns += 1;
            const ms = Date.now() - started;
            if (!this.slowestReconcile || ms > this.slowestReconcile.ms) this.slowestReconcile = { ms, partMs: report.partMs };
          },
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
    await this.buildSource?.close();
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
      releases: async (id) =>
        (await service.listReleases(this.caller, id, { limit: 50 })).items.map((release) => ({
          version: release.version,
          cause: release.cause,
          env: { ...(release.workload.env as Record<string, string>) },
        })),
      setEnv: async (id, env) => void (await service.update(this.caller, id, { env })),
      rollback: async (id, version) => {
        try {
          const container = await service.rollback(this.caller, id, version);
          return { status: 200, ...(container.release !== undefined ? { release: container.release } : {}) };
        } catch (error) {
          if (error instanceof HttpError) return { status: error.statusCode };
          throw error;
        }
      },
      deploy: async (id, dockerfile) => {
        const deploys = this.parts.deploys?.service;
        if (!deploys) throw new Error('This stack was made without a build site');
        const body = await buildContextOf({ Dockerfile: dockerfile });
        const { deploy, upload } = await deploys.create(this.caller, id, {
          sizeBytes: body.length,
          dockerfile: 'Dockerfile',
          buildArgs: {},
        });
        const put = await fetch(upload.url, { method: upload.method, headers: upload.headers, body });
        if (put.status !== 200) throw new Error(`the upload answered ${put.status}`);
        const settled = await pollUntil(
          () => deploys.get(this.caller, id, deploy.id),
          (found) => SETTLED_DEPLOY_STATES.includes(found.state),
          60_000,
        );
        return { status: 201, state: settled.state, stateReason: settled.stateReason, release: settled.release };
      },
    };
  }
}
