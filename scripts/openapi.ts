/**
 * Writes docs/openapi.json from the route table and the schemas each endpoint declares.
 *   npm run openapi            write it
 *   npm run openapi -- --check exit 1 when the committed file is stale
 */
import { readFile, writeFile } from 'node:fs/promises';
import { buildOpenApiJson, OPENAPI_PATH } from './openapi-build.js';

const generated = await buildOpenApiJson();
if (process.argv.includes('--check')) {
  const committed = await readFile(OPENAPI_PATH, 'utf8').catch(() => '');
  if (committed !== generated) {
    console.error(`${OPENAPI_PATH} is stale; run npm run openapi`);
    process.exit(1);
  }
} else {
  await writeFile(OPENAPI_PATH, generated);
  console.log(`wrote ${OPENAPI_PATH}`);
}
