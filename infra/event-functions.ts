import type { RoutePermissions } from '../lib/http/routes.js';
import { TASK_STATE_FUNCTION_ID } from '../lib/local/running-function.js';

/** The handler of ECS task state change events; not a route, so it is not in the route table. */
export const taskStateChangedFunction = {
  id: TASK_STATE_FUNCTION_ID,
  handler: 'functions/containers/task-state-changed.ts',
  // It reads a container and updates its state in place, charging the owner's quota usage in the
  // same transaction; it never creates or deletes an item, and reads no user.
  permissions: { table: { update: ['container', 'quotaUsage'] } } satisfies RoutePermissions as RoutePermissions,
} as const;
