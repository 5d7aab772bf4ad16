import { describe, expect, it } from 'vitest';
import type { StoredContainer } from '../../../lib/containers/container.js';
import type { Release } from '../../../lib/containers/release.js';
import { workloadOf } from '../../../lib/containers/workload.js';
import { newId } from '../../../lib/ids.js';
import { DynamoContainerStore } from '../../../lib/store/dynamo-container-store.js';
import { containerServiceWith } from '../../../lib/wiring/containers.js';
import { storedContainer } from '../../support/workloads.js';

const store = new DynamoContainerStore();
const NOW = '2025-01-01T00:00:00.000Z';
let counter = 0;

function container(): StoredContainer {
  return storedContainer({
    userId: newId(),
    hostname: `rel-${process.pid}-${(counter += 1)}`,
    state: 'stopped',
    image: 'localhost/app:1',
    createdAt: NOW,
    updatedAt: NOW,
  });
}

const releaseOf = (of: StoredContainer, version: number, change: Partial<Release> = {}): Release => ({
  containerId: of.id,
  version,
  cause: version === 1 ? 'create' : 'update',
  workload: workloadOf(of),
  imageDigest: null,
  deployId: null,
  rolledBackTo: null,
  createdAt: NOW,
  ...change,
});

describe('releases in the container store', () => {
  it('writes release 1 with the container, and each workload change with its own release, newest first', async () => {
    // Prepare
    const created = container();
    await store.create(created, undefined, releaseOf(created, 1));

    // Act
    const changed = await store.updateWorkload(created.id, 1, { port: 9090 }, NOW, undefined, releaseOf({ ...created, port: 9090 }, 2));

    // Assess
    expect(changed).toMatchObject({ kind: 'written', container: { release: 2, port: 9090, version: 2 } });
    const page = await store.listReleases(created.id, { limit: 10 });
    expect(page.items.map((release) => [release.version, release.cause, release.workload.port])).toEqual([
      [2, 'update', 9090],
      [1, 'create', 8080],
    ]);
  });

  it('lets exactly one of two changes racing from the same version write its release', async () => {
    // Prepare
    const created = container();
    await store.create(created, undefined, releaseOf(created, 1));

    // Act
    const outcomes = await Promise.all(
      [7001, 7002].map((port) =>
        store.updateWorkload(created.id, 1, { port }, NOW, undefined, releaseOf({ ...created, port }, 2, { cause: 'rollback' })),
      ),
    );

    // Assess
    expect(outcomes.map((outcome) => outcome.kind).sort()).toEqual(['conflict', 'written']);
    const [latest] = (await store.listReleases(created.id, { limit: 10 })).items;
    const current = await store.get(created.id);
    expect(latest!.workload.port).toBe(current!.port);
  });

  it('refuses the release of an older deploy once a newer one went live, and writes nothing', async () => {
    // Prepare
    const created = container();
    await store.create(created, undefined, releaseOf(created, 1));
    const older = newId(Date.now() - 1000);
    const newer = newId();
    await store.updateWorkload(
      created.id,
      1,
      { image: 'localhost/app:new' },
      NOW,
      undefined,
      releaseOf(created, 2, { cause: 'deploy', deployId: newer }),
    );

    // Act
    const late = await store.updateWorkload(
      created.id,
      2,
      { image: 'localhost/app:old' },
      NOW,
      undefined,
      releaseOf(created, 3, { cause: 'deploy', deployId: older }),
    );

    // Assess
    expect(late.kind).toBe('conflict');
    expect(await store.get(created.id)).toMatchObject({ image: 'localhost/app:new', release: 2, lastDeployId: newer });
  });

  it("names the release a deploy's release replaced while the container runs it, and none once anything changed it since", async () => {
    // Prepare: release 2 by an update, release 3 by a deploy
    const service = containerServiceWith();
    const deployId = newId();
    const created = container();
    await store.create(created, undefined, releaseOf(created, 1));
    await store.updateWorkload(created.id, 1, { port: 9090 }, NOW, undefined, releaseOf({ ...created, port: 9090 }, 2));
    const deployed = await store.updateWorkload(
      created.id,
      2,
      { image: `localhost/deploys/app@sha256:${'a'.repeat(64)}` },
      NOW,
      undefined,
      releaseOf(created, 3, { cause: 'deploy', deployId }),
    );
    expect(deployed).toMatchObject({ kind: 'written', container: { release: 3 } });
    const runningDeploy = (await store.get(created.id))!;

    // Act: then a PATCH makes release 4
    const beforeDeploy = await service.releaseBefore(runningDeploy, deployId);
    await store.updateWorkload(created.id, 3, { port: 7070 }, NOW, undefined, releaseOf({ ...created, port: 7070 }, 4));
    const afterPatch = await service.releaseBefore((await store.get(created.id))!, deployId);

    // Assess: a failed deploy puts the container back on 2, but never undoes the PATCH that came after it
    expect(beforeDeploy).toBe(2);
    expect(afterPatch).toBeUndefined();
    expect(await service.releaseBefore(runningDeploy, newId())).toBeUndefined();
  });
});
