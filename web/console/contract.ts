import { bodyFieldsOf, type ContainerRequestSchemas } from '../../lib/http/openapi-fields.js';

/**
 * What the console knows of the API, all from the contract: the records it reads, typed by the
 * views that write them (lib/http/api-types.ts, type-only), and the container fields its forms
 * show, from the OpenAPI document's request bodies (put in at build: lib/http/contract-defines.ts).
 */
export type {
  AppRecord,
  AuthorizationRecord,
  ContainerRecord,
  DeployRecord,
  ErrorEnvelope,
  FieldProblem,
  IssuedTokenRecord,
  LogLine,
  MetricsPoint,
  RegisteredAppRecord,
  ReleaseRecord,
  RotatedAppRecord,
  SessionRecord,
  SnapshotDownloadRecord,
  SnapshotRecord,
  TokenRecord,
  UserRecord,
  VolumeRecord,
} from '../../lib/http/api-types.js';

declare const CONTAINER_REQUEST_SCHEMAS: ContainerRequestSchemas;

/** The fields of POST /api/v1/containers: the hostname and the workload. */
export const CREATE_FIELDS = bodyFieldsOf(CONTAINER_REQUEST_SCHEMAS.create);
/** The fields of PATCH /api/v1/containers/{container_id}: the workload. */
export const UPDATE_FIELDS = bodyFieldsOf(CONTAINER_REQUEST_SCHEMAS.update);
