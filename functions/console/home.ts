import { consoleHome } from '../../lib/console/console-page.js';
import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';

export const handler = endpoint(route.consoleHome, { resolveCredential }, async (request) => consoleHome(request));
