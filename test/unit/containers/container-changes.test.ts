import { describe, expect, it } from 'vitest';
import type { StoredContainer } from '../../../lib/containers/container.js';
import { ContainerChanges } from '../../../lib/containers/container-changes.js';

/*
 * The in-process news a wait pauses on (lib/containers/container-changes.ts): it ends the pause at
 * once, and carries the record its write answered, so a restart's or a start's wait can end on it
 * without reading the record again.
 */
const record = (version: number): StoredContainer => ({ id: 'c1', version, state: 'running' }) as StoredContainer;

describe('ContainerChanges', () => {
  it('ends a pause at the news and answers the record it carried', async () => {
    const changes = new ContainerChanges();
    const watch = changes.watch('c1');
    const startedAt = performance.now();
    const pausing = watch.pause(10_000);
    changes.changed('c1', record(3));
    expect(await pausing).toEqual(record(3));
    expect(performance.now() - startedAt).toBeLessThan(1_000);
    watch.stop();
  });

  it('keeps news that came before the pause, the latest record only, and answers it once', async () => {
    const changes = new ContainerChanges();
    const watch = changes.watch('c1');
    changes.changed('c1', record(3));
    changes.changed('c1', record(4));
    expect(await watch.pause(10_000)).toEqual(record(4));
    // Nothing new since: a full pause, and no record.
    expect(await watch.pause(20)).toBeUndefined();
    watch.stop();
  });

  it('answers no record for news that carried none, nor for another container', async () => {
    const changes = new ContainerChanges();
    const watch = changes.watch('c1');
    changes.changed('c1', record(3));
    changes.changed('c1');
    expect(await watch.pause(10_000)).toBeUndefined();
    changes.changed('c2', record(5));
    expect(await watch.pause(20)).toBeUndefined();
    watch.stop();
  });
});
