import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Which function the local stack is running: a route's id while its handler runs, or the
 * task-state function's id while a task status is applied. Lambda runs each function alone;
 * the local stack runs them all in one process, and tests read this to tell whose DynamoDB
 * request is whose (test/support/table-access-recorder.ts checks each against that function's
 * IAM grant).
 */
export const runningFunction = new AsyncLocalStorage<string>();

/** The id of the function that applies ECS task state changes (infra/event-functions.ts). */
export const TASK_STATE_FUNCTION_ID = 'taskStateChanged';

/** The id of the scheduled reconciliation (infra/event-functions.ts). */
export const RECONCILE_FUNCTION_ID = 'reconcile';

/** The id under which a build's status changes are applied (infra/event-functions.ts, buildStatusChangedPermissions). */
export const BUILD_STATUS_FUNCTION_ID = 'buildStatusChanged';
