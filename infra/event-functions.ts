import type { RoutePermissions } from '../lib/http/routes.js';

/** The handler of ECS task state change events; not a route, so it is not in the route table. */
export const taskStateChangedFunction = {
  id: 'taskStateChanged',
  handler: 'functions/containers/task-state-changed.ts',
  // It reads a container and updates its state in place; it never creates or deletes one.
  permissions: { table: 'update' } as RoutePermissions,
} as const;

/**
 * The scheduled reconciliation (CDK context `reconcileMinutes`; lib/containers/reconciler.ts):
 * it reads containers through the table and its index, changes container states and quota use
 * in place and keeps its checkpoint with UpdateItem (never a put or delete), and lists,
 * describes and stops the tasks of our cluster.
 */
export const reconcileFunction = {
  id: 'reconcile',
  handler: 'functions/containers/reconcile.ts',
  permissions: { table: 'update', ecs: ['list', 'describe', 'stop'] } as RoutePermissions,
  /** A run stops walking 15 s before this (functions/containers/reconcile.ts). */
  timeoutSeconds: 120,
} as const;

/** Every function that is not behind a route. */
export const eventFunctions = [taskStateChangedFunction, reconcileFunction] as const;
