import type { Readable } from 'node:stream';
import type Docker from 'dockerode';
import { describeError, log } from '../log.js';
import { LABEL } from './engine-container-spec.js';

/** What the docker runtime reads of an engine container event. */
export interface EngineContainerEvent {
  action: string;
  /** The container is one of this stack's tasks (its stack label). */
  ours: boolean;
  /** Its task id label, if it has one. */
  taskId?: string;
}

/**
 * The engine's event stream, read as lines of JSON, with only container events passed on. It
 * ends with the engine's stream; `listen` again reconnects. Unfiltered: any container's start may
 * rewrite the engine's chains (lib/local/engine-host-isolation.ts), and Podman 4.3's compat API
 * answers no event at all to an `event` filter (alone or with `type`), so this stack's die and
 * OOM are picked out here too.
 */
export class EngineEvents {
  private stream: Readable | undefined;

  constructor(
    private readonly engine: Docker,
    private readonly stackId: string,
    private readonly onEvent: (event: EngineContainerEvent) => void,
  ) {}

  get listening(): boolean {
    return this.stream !== undefined;
  }

  /** Reads the stream until it ends or fails (logged); answers then. */
  async listen(): Promise<void> {
    try {
      const stream = (await this.engine.getEvents()) as unknown as Readable;
      this.stream = stream;
      let buffered = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        buffered += chunk;
        const lines = buffered.split('\n');
        buffered = lines.pop()!;
        for (const line of lines) this.read(line);
      });
      await new Promise<void>((resolve) => {
        stream.once('end', resolve);
        stream.once('close', resolve);
        stream.once('error', resolve);
      });
    } catch (error) {
      log.warn('The engine event stream failed', describeError(error));
    }
    this.stream = undefined;
  }

  close(): void {
    this.stream?.destroy();
    this.stream = undefined;
  }

  private read(line: string): void {
    let event: { Type?: string; Action?: string; Actor?: { Attributes?: Record<string, string> } };
    try {
      event = JSON.parse(line);
    } catch {
      return;
    }
    if (event.Type !== 'container') return;
    const attributes = event.Actor?.Attributes;
    const taskId = attributes?.[LABEL.taskId];
    this.onEvent({ action: event.Action ?? '', ours: attributes?.[LABEL.stack] === this.stackId, ...(taskId ? { taskId } : {}) });
  }
}
