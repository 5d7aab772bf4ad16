import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const OPENAPI_PATH = join(root, 'docs', 'openapi.json');

/** Imports every route's handler (on the local runtime, so no AWS settings are needed). */
export async function buildOpenApiJson(): Promise<string> {
  process.env.CONTAINER_RUNTIME ??= 'local';
  const { routes } = await import('../lib/http/routes.js');
  const { openApiDocument } = await import('../lib/http/openapi.js');
  const endpoints = [];
  for (const route of routes) {
    const module = await import(pathToFileURL(join(root, route.handler)).href);
    endpoints.push(module.handler);
  }
  return `${JSON.stringify(openApiDocument(endpoints), null, 2)}\n`;
}
