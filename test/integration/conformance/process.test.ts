import { afterAll, beforeAll } from 'vitest';
import { personalAccessToken, signedInUser } from '../../support/api-client.js';
import { simEnv, TASK_APP_PATH } from '../../support/conformance/ecs-harness.js';
import { describeConformance, type ConformanceHarness } from '../../support/conformance/journeys.js';
import { localHarness } from '../../support/conformance/local-harness.js';
import { startTestStack, type TestStack } from '../../support/local-stack.js';

/*
 * The runtime conformance journeys over the process runtime: the local stack in this process
 * (CONTAINER_RUNTIME=local from setup-env), each container the simulator's task app run by Node
 * as the container's command, reached through the local proxy.
 */
let stack: TestStack;
let harness: ConformanceHarness;

beforeAll(async () => {
  stack = await startTestStack();
  const token = await personalAccessToken(stack.baseUrl, await signedInUser(stack.baseUrl));
  harness = localHarness(stack.baseUrl, token, (behaviour) => ({
    command: [process.execPath, TASK_APP_PATH],
    env: simEnv(behaviour),
  }));
});

afterAll(async () => {
  await stack?.close();
});

describeConformance('process', () => harness, {
  'out of memory': { skip: 'the process runtime sets no memory limit (docs/runtimes.md, "Process runtime")' },
  'lost RUNNING event': { skip: 'no event can be lost: the process runtime calls the task state listener in this process' },
  'deploy from source': {
    skip: 'the process runtime builds nothing: a deploy answers 501 naming the docker runtime (lib/wiring/local-deploys.ts)',
  },
});
