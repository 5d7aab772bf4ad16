import { defineConfig } from 'vitest/config';

/** Integration and e2e tests share one DynamoDB Local and get a fresh table per file. */
const withDynamoDbLocal = {
  globalSetup: ['test/support/global-dynamodb.ts'],
  setupFiles: ['test/support/setup-env.ts', 'test/support/table-access-recorder.ts'],
};

export default defineConfig({
  test: {
    // Sized for two cores. Each file gets a fresh module graph, so configuration parsed at
    // module load sees that file's own table and directories.
    pool: 'forks',
    env: {
      // The SDK's notice that it will need Node 22 from 2027; Lambda runs nodejs22.x already.
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      // aws-cdk-lib's built-in CloudFormation validation (on by default in the 2.276 we use; `cdk synth
      // --no-validation` or CDK_VALIDATION=false turns it off) starts a WebAssembly engine at each
      // process's first synth (a one-queue stack: 28.4 s against 1.4 s without it, load average 14
      // on two cores), and a full stack's synth took 38 s against 7 s. It only ever
      // warns (its errors are downgraded), no test reads its report, and cdk-nag, which the tests
      // do assert on, is a plugin of its own and still runs.
      CDK_VALIDATION: 'false',
    },
    maxWorkers: 2,
    isolate: true,
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'] },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          ...withDynamoDbLocal,
          testTimeout: 20_000,
          hookTimeout: 30_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          ...withDynamoDbLocal,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          // Against a real Docker Engine API (Podman's, started by test/support/global-engine.ts when none answers).
          name: 'engine',
          include: ['test/engine/**/*.test.ts'],
          // One file at a time, after every other project: each Podman container start sets up a
          // network of its own (CNI, iptables), and with two engine files and the rest of the
          // suite on two cores, starts ran past the 25 s start budget.
          fileParallelism: false,
          sequence: { groupOrder: 1 },
          globalSetup: [...withDynamoDbLocal.globalSetup, 'test/support/global-engine.ts'],
          setupFiles: [...withDynamoDbLocal.setupFiles, 'test/support/setup-engine-env.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: { name: 'infra', include: ['test/infra/**/*.test.ts'], testTimeout: 120_000, hookTimeout: 120_000 },
      },
    ],
  },
});
