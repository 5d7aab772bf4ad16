// Its own module so the reconciler's parts (reconcile-routes.ts, reconcile-usage.ts) count into it without importing the reconciler.
/** What one run did; every change is also logged on its own line. */
export interface ReconcileReport {
  tasksListed: number;
  /** Tasks the runtime says this service did not start for a container (an ECS service's, an operator's): left alone. */
  foreignTasksIgnored: number;
  /** Tasks this service started for a container that no longer exists: stopped. */
  orphanTasksStopped: number;
  /** Tasks stopped because their container has moved on to another task, or to stopped or failed. */
  supersededTasksStopped: number;
  containersChecked: number;
  /** Containers whose task had gone without anyone recording it: now failed, or stopped when ECS says it was stopped on request. */
  containersFailed: number;
  containersStopped: number;
  usageChecked: number;
  usageCorrected: number;
  /** Task routes in the zone that no container holds the task of any more: their withdrawal asked of the zone's writer. */
  staleRoutesFound: number;
  /** Running containers whose current task had no route (or another) in the zone: its publication asked of the zone's writer. */
  missingRoutesFound: number;
  /** Restarts the restart policy had due, begun by this run. */
  restartsBegun: number;
  /** Provisioning containers past their grace whose task's status was applied here, its event lost. */
  lostEventsApplied: number;
  /** Changes not made because the container or the use moved on meanwhile (the other writer decided). */
  racesLost: number;
  /** Tasks or containers whose check failed (logged); the next run tries them again. */
  errors: number;
  /** Whether both walks reached their end (false: the next run continues them). */
  complete: boolean;
  /**
   * How long each part of the run took, in ms: a run past its deadline names the part that held it
   * (a walk waits for the page in hand, and an SDK call for its retries, before it looks at the deadline).
   */
  partMs: Partial<Record<ReconcilePart, number>>;
}

export type ReconcilePart = 'tasks' | 'restarts' | 'zone' | 'containers' | 'missingRoutes' | 'usage';

/** Runs one part of a run, noting its time in the report whether it succeeds or fails. */
export async function timedPart<T>(report: ReconcileReport, part: ReconcilePart, work: () => Promise<T>): Promise<T> {
  const started = Date.now();
  try {
    return await work();
  } finally {
    report.partMs[part] = Date.now() - started;
  }
}
