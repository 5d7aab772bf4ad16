import { bodyFieldsOf, type ContainerRequestSchemas } from '../../lib/http/openapi-fields.js';

/**
 * The container fields the CLI takes and prints, from the OpenAPI document's request bodies,
 * put in when the CLI is built (scripts/build-cli.ts, lib/http/contract-defines.ts).
 */
declare const CONTAINER_REQUEST_SCHEMAS: ContainerRequestSchemas;

/** POST /api/v1/containers: the hostname and the workload. */
export const CREATE_FIELDS = bodyFieldsOf(CONTAINER_REQUEST_SCHEMAS.create);
/** PATCH /api/v1/containers/{container_id}: the workload. */
export const UPDATE_FIELDS = bodyFieldsOf(CONTAINER_REQUEST_SCHEMAS.update);
