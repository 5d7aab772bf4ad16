/**
 * Writes docs/openapi.json from the route table and the schemas each endpoint declares, and
 * lib/http/openapi-types.ts, its types as openapi-typescript writes them.
 *   npm run openapi            write it
 *   npm run openapi -- --check exit 1 when the committed file is stale
 */
import { readFile, writeFile } from 'node:fs/promises';
import { buildOpenApiJson, buildOpenApiTypes, OPENAPI_PATH, OPENAPI_TYPES_PATH } from './openapi-build.js';

const document = await buildOpenApiJson();
const files = [
  [OPENAPI_PATH, document],
  [OPENAPI_TYPES_PATH, await buildOpenApiTypes(document)],
] as const;
for (const [path, generated] of files) {
  if (process.argv.includes('--check')) {
    const committed = await readFile(path, 'utf8').catch(() => '');
    if (committed !== generated) {
      console.error(`${path} is stale; run npm run openapi`);
      process.exitCode = 1;
    }
  } else {
    await writeFile(path, generated);
    console.log(`wrote ${path}`);
  }
}
