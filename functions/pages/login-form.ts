import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { loginPageReply } from '../../lib/pages/login-page.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { identityService } from '../../lib/wiring/identity.js';

export const handler = endpoint(route.loginPage, { resolveCredential }, (request) => loginPageReply(request, identityService));
