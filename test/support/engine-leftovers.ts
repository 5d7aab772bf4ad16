import type Docker from 'dockerode';
import { LABEL } from '../../lib/local/docker-runtime.js';

/**
 * Removes the engine containers (running or exited: an exited one keeps its logs until it is
 * removed) and the networks of the stack whose container directory is `containerDir`, and
 * nothing else: each carries that stack's label (lib/local/docker-runtime.ts). A stack started
 * by `npm start` with DATA_DIR has `DATA_DIR/containers` (scripts/local.ts).
 */
export async function removeStackLeftovers(engine: Docker, containerDir: string): Promise<void> {
  const { stackIdOf } = await import('../../lib/wiring/local-containers.js');
  const ofStack = { label: [`${LABEL.stack}=${stackIdOf(containerDir)}`] };
  const leftovers = await engine.listContainers({ all: true, filters: ofStack });
  await Promise.all(
    leftovers.map((info) =>
      engine
        .getContainer(info.Id)
        .remove({ force: true })
        .catch(() => undefined),
    ),
  );
  // And the network of each container (lib/local/engine-networks.ts), now unused.
  const networks = await engine.listNetworks({ filters: ofStack });
  await Promise.all(
    networks.map((network) =>
      engine
        .getNetwork(network.Id)
        .remove()
        .catch(() => undefined),
    ),
  );
}
