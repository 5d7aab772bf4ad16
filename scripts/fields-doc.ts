/**
 * Writes docs/fields.md, the table of a container's workload fields, from their declaration.
 *   npm run fields-doc            write it
 *   npm run fields-doc -- --check exit 1 when the committed file is stale
 */
import { readFile, writeFile } from 'node:fs/promises';
import { buildFieldsDoc, FIELDS_DOC_PATH } from './fields-doc-build.js';

const generated = await buildFieldsDoc();
if (process.argv.includes('--check')) {
  const committed = await readFile(FIELDS_DOC_PATH, 'utf8').catch(() => '');
  if (committed !== generated) {
    console.error(`${FIELDS_DOC_PATH} is stale; run npm run fields-doc`);
    process.exitCode = 1;
  }
} else {
  await writeFile(FIELDS_DOC_PATH, generated);
  console.log(`wrote ${FIELDS_DOC_PATH}`);
}
