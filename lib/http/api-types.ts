/**
 * The records the API answers, for its own clients (the console, the CLI) to import type-only:
 * each is the type of the view that writes it, so a field added to a view reaches them with no
 * hand edit. Types only: nothing here reaches a bundle.
 */
import type { ContainerView } from '../containers/container.js';
import type { ReleaseView } from '../containers/release.js';
import type { DeployView } from '../deploys/deploy.js';
import type { LogLine as ContainerLogLine } from '../containers/logs.js';
import type { ContainerMetrics } from '../containers/metrics.js';
import type { MetricsPoint as ContainerMetricsPoint } from '../containers/metrics-history.js';
import type { CreateContainerBody, UpdateContainerBody } from '../containers/schemas.js';
import type { FieldProblem } from '../errors.js';
import type { SnapshotView, VolumeView } from '../volumes/volume.js';
import type { issuedPersonalAccessTokenView, personalAccessTokenView, sessionView, userView } from '../identity/views.js';
import type {
  authorizationView,
  deviceAuthorizationView,
  oauthAppView,
  registeredOAuthAppView,
  rotatedOAuthAppView,
  tokenResponseView,
} from '../oauth/views.js';

export type { FieldProblem };
export type ContainerRecord = ContainerView;
export type ReleaseRecord = ReleaseView;
export type DeployRecord = DeployView;
export type CreateContainerRequest = Partial<CreateContainerBody> & { hostname: string };
export type UpdateContainerRequest = UpdateContainerBody;
export type LogLine = ContainerLogLine;
export type MetricsPoint = ContainerMetricsPoint;
export type MetricsRecord = ContainerMetrics;
export type VolumeRecord = VolumeView;
export type SnapshotRecord = SnapshotView;
/** GET /api/v1/volumes/{volume_id}/snapshots/{snapshot_id}/download. */
export interface SnapshotDownloadRecord {
  url: string;
  expires_at: string;
}
export type UserRecord = ReturnType<typeof userView>;
/** The session as GET /api/v1/sessions/current answers it (its token is the cookie's, not repeated). */
export type SessionRecord = Omit<ReturnType<typeof sessionView>, 'token'>;
export type TokenRecord = ReturnType<typeof personalAccessTokenView>;
export type IssuedTokenRecord = ReturnType<typeof issuedPersonalAccessTokenView>;
export type AppRecord = ReturnType<typeof oauthAppView>;
export type RegisteredAppRecord = ReturnType<typeof registeredOAuthAppView>;
export type RotatedAppRecord = ReturnType<typeof rotatedOAuthAppView>;
export type TokenResponse = ReturnType<typeof tokenResponseView>;
export type AuthorizationRecord = ReturnType<typeof authorizationView>;
export type DeviceAuthorizationRecord = ReturnType<typeof deviceAuthorizationView>;

/** Every failure's body (docs/openapi.json, components.schemas.Error). */
export interface ErrorEnvelope {
  error: { code: string; message: string; details?: FieldProblem[] };
}

/** RFC 6749 section 5.2's error body, from the token, revocation and device authorization endpoints. */
export interface OAuthErrorBody {
  error: string;
  error_description?: string;
}
