import { endpoint } from '../../lib/http/endpoint.js';
import { loginPageReply } from '../../lib/pages/login-page.js';
import { identityService, resolveCredential } from '../../lib/wiring/identity.js';

export const handler = endpoint('loginPage', { resolveCredential }, (request) => loginPageReply(request, identityService));
