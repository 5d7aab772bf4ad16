/**
 * The records the API answers, for its own clients (the console, the CLI) to import type-only:
 * each is the document's own schema (docs/openapi.json, as openapi-typescript writes it in
 * lib/http/openapi-types.ts), so the console and the CLI read the contract any generated client
 * reads. The schemas are declared in lib/http/records.ts, where each view is checked against its
 * own. Types only: nothing here reaches a bundle.
 */
import type { CreateContainerBody, UpdateContainerBody } from '../containers/schemas.js';
import type { FieldProblem } from '../errors.js';
import type { components } from './openapi-types.js';

type Schemas = components['schemas'];

export type { FieldProblem };
export type ContainerRecord = Schemas['Container'];
export type ReleaseRecord = Schemas['Release'];
export type DeployRecord = Schemas['Deploy'];
export type VolumeRecord = Schemas['Volume'];
export type SnapshotRecord = Schemas['Snapshot'];
export type SnapshotDownloadRecord = Schemas['SnapshotDownload'];
export type CreateContainerRequest = Partial<CreateContainerBody> & { hostname: string };
export type UpdateContainerRequest = UpdateContainerBody;
export type LogLine = Schemas['LogLine'];
export type MetricsPoint = Schemas['MetricsPoint'];
export type MetricsRecord = Schemas['Metrics'];
export type UserRecord = Schemas['User'];
/** The session as GET /api/v1/sessions/current answers it (its token is the cookie's, not repeated). */
export type SessionRecord = Schemas['CurrentSession'];
export type TokenRecord = Schemas['PersonalAccessToken'];
export type IssuedTokenRecord = Schemas['IssuedPersonalAccessToken'];
export type AppRecord = Schemas['OAuthApp'];
export type RegisteredAppRecord = Schemas['RegisteredOAuthApp'];
export type RotatedAppRecord = Schemas['RotatedOAuthApp'];
export type TokenResponse = Schemas['TokenResponse'];
export type AuthorizationRecord = Schemas['Authorization'];
export type DeviceAuthorizationRecord = Schemas['DeviceAuthorization'];

/** Every failure's body (docs/openapi.json, components.schemas.Error). */
export interface ErrorEnvelope {
  error: { code: string; message: string; details?: FieldProblem[] };
}

/** RFC 6749 section 5.2's error body, from the token, revocation and device authorization endpoints. */
export interface OAuthErrorBody {
  error: string;
  error_description?: string;
}
