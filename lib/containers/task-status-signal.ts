import { EventEmitter } from 'node:events';

/**
 * That a task status of a container was just applied to its record in this process. The local
 * runtimes report their tasks' statuses in the stack's own process, so a wait for a container (a
 * start's, a restart's, a swap's stop) wakes the moment its status lands instead of at its next
 * poll, whose backoff (100 ms doubling to 2 s) once added up to the wait itself: a swap of a
 * container with a volume held its requests 1.5 times as long as a plain stop and start. On AWS
 * another function applies the statuses and nothing fires here: the waits poll as before.
 */
export class TaskStatusSignal {
  private readonly emitter = new EventEmitter().setMaxListeners(0);
  /**
   * How many statuses (of any container) were applied, so a wait sees one that landed between its read
   * and its pause; another container's costs that wait one read more, and no memory per container.
   */
  private applied = 0;

  /** A status of the container was applied to its record. */
  notify(containerId: string): void {
    this.applied += 1;
    this.emitter.emit('applied', containerId);
  }

  /** Where the statuses stand now: a pause from it ends at once if one landed since. */
  mark(): number {
    return this.applied;
  }

  /** Resolves once a status of the container lands (or any did since `mark`), or after `ms`, whichever comes first. */
  after(containerId: string, mark: number, ms: number): Promise<void> {
    if (this.applied !== mark) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.emitter.off('applied', onApplied);
        resolve();
      };
      const onApplied = (changed: string) => {
        if (changed === containerId) done();
      };
      const timer = setTimeout(done, ms);
      this.emitter.on('applied', onApplied);
    });
  }

  /** Calls `listener` with each container whose status was applied; answers the unsubscribe. */
  onApplied(listener: (containerId: string) => void): () => void {
    this.emitter.on('applied', listener);
    return () => this.emitter.off('applied', listener);
  }
}

/** The process's one signal: the local runtimes' status handler notifies it, the waits and the local proxy listen. */
export const taskStatusSignal = new TaskStatusSignal();
