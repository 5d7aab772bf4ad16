import type { PublishedRoutes, RouteRequests } from '../dns-routes/app-routes.js';

/*
 * What a restart's retire job needs where routes are published (AWS with routing): the old task
 * is stopped only after the routes moved (docs/containers.md, "Restart"; TaskEvents.retire).
 */

/** What a restart's retire job reads and asks of the routes: the writer's notes, and its queue. */
export interface RetireRoutes {
  published: Pick<PublishedRoutes, 'find'>;
  requests: RouteRequests;
  /** How long a retire waits for the routes at most (RETIRE_ROUTES_MAX_WAIT_MS unless set). */
  maxWaitMs?: number;
}

/**
 * How long a restart's old task waits for the routes to move before it is stopped anyway: a
 * route changes message whose batch failed comes back after the queue's visibility timeout (181 s,
 * docs/routing.md "Route changes";
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html),
 * so 5 minutes let one redelivery through, and the
 * `RouteChangesLag` alarm (3 minutes over 30 s) has fired by then; a writer that never catches up
 * must not keep two tasks billing.
 */
export const RETIRE_ROUTES_MAX_WAIT_MS = 300_000;

/** How often a restart's retire job looks again at the routes it waits for. */
export const RETIRE_LOOK_AGAIN_MS = 1_000;
/**
 * Between two requests to withdraw the old task's route while its note stays: one is enough for a
 * writer that keeps up (SQS delivers it again until the writer applied it), so this only covers a
 * request its writer dropped, and spares a lagging writer a request a second per restart.
 */
export const RETIRE_ASK_AGAIN_MS = 30_000;
