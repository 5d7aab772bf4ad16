import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { containerRequestSchemasOf } from './openapi-fields.js';

/** Where the OpenAPI document is, under the repository root (written by `npm run openapi`). */
export const OPENAPI_DOCUMENT = 'docs/openapi.json';

/**
 * The esbuild `define`s that hand the console and the CLI the parts of the OpenAPI document they
 * read at run time (the container request bodies), so neither carries the whole document nor a
 * field list of its own. Each client declares the global it reads (web/console/contract.ts, cli/src/contract.ts).
 */
export function contractDefines(root: string): Record<string, string> {
  const document = JSON.parse(readFileSync(join(root, OPENAPI_DOCUMENT), 'utf8'));
  return { CONTAINER_REQUEST_SCHEMAS: JSON.stringify(containerRequestSchemasOf(document)) };
}
