import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleHandlers } from '../infra/bundling.js';
import { repositoryRoot } from '../infra/paths.js';
import { routes } from '../lib/http/routes.js';

/**
 * Module initialisation time of a few function bundles: each bundle is built exactly as
 * deployed (infra/bundling.ts), written to a temporary directory and imported in a fresh Node
 * process N times; prints the median, min and max of the time `import()` took.
 * Usage: `npm run init-times -- [runs] [routeId ...]` (default 15 runs of a read, a container
 * start and the token endpoint).
 */
const [runsArgument, ...idArguments] = process.argv.slice(2);
const runs = Number(runsArgument ?? 15);
const ids = idArguments.length > 0 ? idArguments : ['getContainer', 'startContainer', 'token'];
const handlers = ids.map((id) => {
  const route = routes.find((candidate) => candidate.id === id);
  if (!route) throw new Error(`No route ${id}`);
  return route.handler;
});
const bundles = bundleHandlers(repositoryRoot, handlers);
const outDir = mkdtempSync(join(tmpdir(), 'init-times-'));
// Enough configuration for every function's module-scope setup; nothing is called.
const env = {
  ...process.env,
  AWS_REGION: 'eu-west-1',
  AWS_ACCESS_KEY_ID: 'x',
  AWS_SECRET_ACCESS_KEY: 'x',
  ECS_CLUSTER_ARN: 'arn:aws:ecs:eu-west-1:123456789012:cluster/c',
  ECS_TASK_DEFINITION_ARN: 'arn:aws:ecs:eu-west-1:123456789012:task-definition/t:1',
  ECS_SUBNET_IDS: 'subnet-a',
  ECS_SECURITY_GROUP_IDS: 'sg-a',
  ECS_TASK_ROLE_ARN: 'arn:aws:iam::123456789012:role/task',
  ECS_EXECUTION_ROLE_ARN: 'arn:aws:iam::123456789012:role/execution',
  ECS_LOG_GROUP: 'workload-logs',
};
try {
  for (const [index, id] of ids.entries()) {
    const dir = join(outDir, id);
    mkdirSync(dir, { recursive: true });
    for (const file of bundles.get(handlers[index]!)!) writeFileSync(join(dir, file.name), file.contents);
    const script = `const t = performance.now(); await import(${JSON.stringify(join(dir, 'index.mjs'))}); console.log(performance.now() - t);`;
    const times: number[] = [];
    for (let run = 0; run < runs; run++) {
      const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], { env, stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim();
      times.push(Number(output.split('\n').at(-1)));
    }
    times.sort((a, b) => a - b);
    console.log(
      `${id.padEnd(16)} median ${times[Math.floor(runs / 2)]!.toFixed(1).padStart(6)} ms  min ${times[0]!.toFixed(1)}  max ${times.at(-1)!.toFixed(1)}  (${runs} runs)`,
    );
  }
} finally {
  rmSync(outDir, { recursive: true, force: true });
}
