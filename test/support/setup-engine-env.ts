import { afterAll, inject } from 'vitest';
import { engineClient } from '../../lib/local/docker-engine.js';
import { LABEL } from '../../lib/local/docker-runtime.js';

/*
 * After setup-env, for the engine tests: the file's stack runs containers on the engine the
 * global setup found or started. At the end, the file's engine containers (stopped ones keep
 * their logs until their container is deleted) and their networks are removed, so runs leave
 * nothing behind.
 */
const dockerHost = inject('dockerHost');
process.env.CONTAINER_RUNTIME = 'docker';
process.env.DOCKER_HOST = dockerHost;

afterAll(async () => {
  const { stackIdOf } = await import('../../lib/wiring/local-containers.js');
  const engine = engineClient(dockerHost);
  const leftovers = await engine.listContainers({
    all: true,
    filters: { label: [`${LABEL.stack}=${stackIdOf(process.env.LOCAL_CONTAINER_DIR!)}`] },
  });
  await Promise.all(
    leftovers.map((info) =>
      engine
        .getContainer(info.Id)
        .remove({ force: true })
        .catch(() => undefined),
    ),
  );
  // And the network of each container (lib/local/engine-networks.ts), now unused.
  const networks = await engine.listNetworks({ filters: { label: [`${LABEL.stack}=${stackIdOf(process.env.LOCAL_CONTAINER_DIR!)}`] } });
  await Promise.all(
    networks.map((network) =>
      engine
        .getNetwork(network.Id)
        .remove()
        .catch(() => undefined),
    ),
  );
});
