import type { RoutePermissions } from '../lib/http/routes.js';

/** The handler of ECS task state change events; not a route, so it is not in the route table. */
export const taskStateChangedFunction = {
  id: 'taskStateChanged',
  handler: 'functions/containers/task-state-changed.ts',
  // It reads a container and updates its state in place; it never creates or deletes one.
  permissions: { table: 'update' } as RoutePermissions,
} as const;
