import { describe, expect, it } from 'vitest';
import { TaskStatusSignal } from '../../../lib/containers/task-status-signal.js';

/** Which of the pause and a 200 ms timer ends first. */
const race = (pause: Promise<void>) =>
  Promise.race([pause.then(() => 'woken' as const), new Promise<'timed out'>((resolve) => setTimeout(() => resolve('timed out'), 200))]);

describe("a wait's pause between two reads", () => {
  it('ends when a status of its container lands, not at its next poll', async () => {
    const signal = new TaskStatusSignal();
    const pause = signal.after('c1', signal.mark(), 60_000);

    signal.notify('c1');

    expect(await race(pause)).toBe('woken');
  });

  it('goes on through another container’s status', async () => {
    const signal = new TaskStatusSignal();
    const pause = signal.after('c1', signal.mark(), 60_000);

    signal.notify('c2');

    expect(await race(pause)).toBe('timed out');
  });

  it('ends at once when a status landed between the read and the pause, so the wait reads again', async () => {
    const signal = new TaskStatusSignal();
    const mark = signal.mark();
    signal.notify('c1');

    expect(await race(signal.after('c1', mark, 60_000))).toBe('woken');
  });

  it('ends after its time when nothing lands, as a poll does', async () => {
    const signal = new TaskStatusSignal();

    expect(await race(signal.after('c1', signal.mark(), 10))).toBe('woken');
  });
});
