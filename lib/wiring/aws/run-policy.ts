import { everyAccountMayRun, type RunPolicy } from '../../containers/run-policy.js';

/**
 * Lambda's lib/wiring/run-policy.ts: Fargate keeps each task apart, so every account's containers
 * run. Apart from the runtime, so a function that needs only the policy (update) bundles no ECS client.
 */
export const runPolicy: RunPolicy = everyAccountMayRun;
