/**
 * The service's own CloudWatch metrics, written as EMF lines by lib/observability/metrics.ts and
 * read back by the alarms and the dashboard (infra/constructs/operations-monitoring.ts): one list,
 * so a name or a dimension cannot drift between the writer and the readers.
 */
export const METRICS_NAMESPACE = 'ContainerHosting';

/**
 * Every metric carries `service` = the stack name (POWERTOOLS_SERVICE_NAME, set by
 * infra/constructs/service-function.ts), so two stacks in one account stay apart.
 */
export const SERVICE_DIMENSION = 'service';

export const METRIC = {
  /** One per API request; dimensions `route` (the route table's id) and `statusClass` (2xx … 5xx). */
  requests: 'Requests',
  /** Tokens issued at the token endpoint; dimension `grantType` (authorization_code, refresh_token). */
  tokenGrants: 'TokenGrants',
  /** A rotated refresh token presented again: its whole grant was revoked (RFC 9700 section 4.14.2). */
  refreshTokenReuse: 'RefreshTokenReuseDetected',
  /** A rotated refresh token presented again within the grace, answered with its rotation's pair (docs/oauth.md). */
  refreshTokenRetry: 'RefreshTokenRetryAnswered',
  containersCreated: 'ContainersCreated',
  /** A task was launched for a container, which is now provisioning (create, start, restart). */
  containersLaunched: 'ContainersLaunched',
  /** A container's task reached RUNNING. */
  containersStarted: 'ContainersStarted',
  /** A container became `failed`: its task could not be launched or stopped before or while running. */
  containersFailed: 'ContainersFailed',
  /** A create, start, restart or resize answered 403 QUOTA_EXCEEDED. */
  quotaRefusals: 'QuotaRefusals',
  /** Changes one reconciliation run made (orphan tasks stopped, containers failed or stopped, quota use corrected). */
  reconcilerCorrections: 'ReconcilerCorrections',
  /** A request for a sleeping or starting container answered at once: the wakes held were at their bound (WAKE_HOLDS_*). */
  wakeHoldsRefused: 'WakeHoldsRefused',
} as const;

export type MetricName = (typeof METRIC)[keyof typeof METRIC];
