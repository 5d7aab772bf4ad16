import { ecsTaskStateChange } from '../lambda-event.js';
import type { EcsSim, SimTask } from './ecs.js';
import type { FaultCounts } from './faults.js';
import type { SeededRandom } from './rng.js';
import type { SimQueue } from './sqs.js';

export interface DeliveryFaults {
  /** Probability that an event never arrives. */
  loss?: number;
  /** Probability that an event arrives twice. */
  duplicate?: number;
  /** Each delivery is late by a uniform [min, max] ms; different delays reorder events. */
  delayMs?: [number, number];
  /** Probability that a delivery is held back by `reorderMs` more, so that later events overtake it. */
  reorder?: number;
  reorderMs?: number;
}

/**
 * The EventBridge rule that sends ECS "Task State Change" events to an SQS queue. EventBridge
 * delivers at least once and in no promised order; events may come late, twice, or (when the
 * target fails past its retry policy) not at all
 * (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-retry-policy.html,
 * https://docs.aws.amazon.com/AmazonECS/latest/developerguide/ecs_task_events.html: "events
 * might be delivered out of order … use the version field"). The event is the real shape:
 * detail-type `ECS Task State Change`, source `aws.ecs`, `detail` the task as DescribeTasks
 * answers it (ISO 8601 times) with its `version`.
 */
export class TaskEventRule {
  readonly delivered: Array<{ taskArn: string; lastStatus: string; version: number }> = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly dropOnce: Array<(task: SimTask) => boolean> = [];
  private readonly copyOnce: Array<{ match: (task: SimTask) => boolean; keep: (body: string) => void }> = [];
  private closed = false;

  constructor(
    ecs: EcsSim,
    private readonly queue: SimQueue,
    private readonly faults: DeliveryFaults,
    private readonly random: SeededRandom,
    private readonly counts: FaultCounts,
  ) {
    ecs.onTaskChange((task) => this.onChange(ecs, task));
  }

  /** Loses the next event for which `match` holds (e.g. a task's RUNNING), whatever the probabilities. */
  loseNext(match: (task: SimTask) => boolean): void {
    this.dropOnce.push(match);
  }

  /**
   * Delivers the next event for which `match` holds as usual and answers a copy of it, for a test
   * to send to the queue again later: delivery is at least once, so an event may come twice, the
   * second time after newer ones.
   */
  copyNext(match: (task: SimTask) => boolean): Promise<string> {
    return new Promise((keep) => this.copyOnce.push({ match, keep }));
  }

  private onChange(ecs: EcsSim, task: SimTask): void {
    const event = ecsTaskStateChange({
      ...ecs.wire(task, 'iso'),
      taskArn: task.taskArn,
      updatedAt: new Date().toISOString(),
    } as Record<string, unknown> & { taskArn: string });
    const body = JSON.stringify(event);
    const copied = this.copyOnce.findIndex(({ match }) => match(task));
    if (copied >= 0) this.copyOnce.splice(copied, 1)[0]!.keep(body);
    const forced = this.dropOnce.findIndex((match) => match(task));
    if (forced >= 0) {
      this.dropOnce.splice(forced, 1);
      this.counts.add('events.lost');
      return;
    }
    if (this.random.chance(this.faults.loss ?? 0)) {
      this.counts.add('events.lost');
      return;
    }
    const copies = this.random.chance(this.faults.duplicate ?? 0) ? 2 : 1;
    if (copies === 2) this.counts.add('events.duplicated');
    for (let i = 0; i < copies; i++) {
      let delay = this.random.between(...(this.faults.delayMs ?? [0, 0]));
      if (this.random.chance(this.faults.reorder ?? 0)) {
        this.counts.add('events.reordered');
        delay += this.faults.reorderMs ?? 1_000;
      }
      if (delay > 0) this.counts.add('events.delayed');
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        if (this.closed) return;
        this.delivered.push({ taskArn: task.taskArn, lastStatus: String(event.detail.lastStatus), version: Number(event.detail.version) });
        this.queue.send(body);
      }, delay);
      this.timers.add(timer);
    }
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
  }
}
