import { afterAll, beforeAll } from 'vitest';
import { engineClient } from '../../lib/local/docker-engine.js';
import { LABEL } from '../../lib/local/docker-runtime.js';
import { personalAccessToken, signedInUser } from '../support/api-client.js';
import { describeConformance, type Behaviour, type ConformanceHarness } from '../support/conformance/journeys.js';
import { localHarness } from '../support/conformance/local-harness.js';
import { TEST_IMAGE } from '../support/global-engine.js';
import { startTestStack, type TestStack } from '../support/local-stack.js';

/*
 * The runtime conformance journeys over the docker runtime on the engine (Podman's here): the
 * local stack in this process, each container the test image (busybox httpd) running a script
 * that acts out the journey's behaviour.
 */
let stack: TestStack;
let harness: ConformanceHarness;

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** A behaviour as a busybox script; PID 1 traps SIGTERM so that a stop is prompt. */
function scriptFor(behaviour: Behaviour): string[] {
  if (behaviour.exitAfterMs !== undefined)
    return ['sh', '-c', `sleep ${seconds(behaviour.exitAfterMs)}; echo exiting; exit ${behaviour.exitCode ?? 1}`];
  if (behaviour.oomAfterMs !== undefined) {
    // Serves, then the main process becomes a dd whose 700 MB buffer passes the 512 MB limit.
    return [
      'sh',
      '-c',
      `httpd -p $PORT -h /www; sleep ${seconds(behaviour.oomAfterMs)}; exec dd if=/dev/zero of=/dev/null bs=700M count=1`,
    ];
  }
  if (behaviour.neverListen) return ['sh', '-c', "trap 'exit 0' TERM; sleep 100000 & wait"];
  // An empty directory answers 404 to /healthz; /www has the test image's page.
  const root = behaviour.healthStatus !== undefined && behaviour.healthStatus >= 400 ? '/tmp/empty' : '/www';
  const delay = behaviour.listenAfterMs ? `sleep ${seconds(behaviour.listenAfterMs)}; ` : '';
  return ['sh', '-c', `trap 'exit 0' TERM; mkdir -p /tmp/empty; (${delay}httpd -f -p $PORT -h ${root}) & wait`];
}

beforeAll(async () => {
  stack = await startTestStack();
  const token = await personalAccessToken(stack.baseUrl, await signedInUser(stack.baseUrl));
  const engine = engineClient(process.env.DOCKER_HOST);
  harness = localHarness(
    stack.baseUrl,
    token,
    (behaviour) => ({ image: TEST_IMAGE, command: scriptFor(behaviour), env: {} }),
    async (containerId) => {
      const running = await engine.listContainers({ filters: { label: [`${LABEL.containerId}=${containerId}`] } });
      return running.map((info) => `engine container ${info.Id.slice(0, 12)} (${info.State})`);
    },
  );
});

afterAll(async () => {
  await stack?.close();
});

describeConformance(
  'docker (Podman)',
  () => harness,
  {
    'lost RUNNING event': {
      skip: "no event can be lost: the docker runtime calls the task state listener in this process (the engine's event stream is reconnected, and the health watch is the backstop)",
    },
    'deploy from source': {
      skip: "the local stack lets only admins deploy (its builds' RUN steps cannot be kept off the host) and a build needs a local base image: test/engine/deploys.test.ts takes this journey as an admin",
    },
  },
  // Three at once: seven containers starting together on a loaded 2-core machine took Podman past the 25 s start budget.
  { maxConcurrent: 3 },
);
