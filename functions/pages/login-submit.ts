import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { handleLoginSubmission } from '../../lib/pages/login-submission.js';
import { identityService } from '../../lib/wiring/identity.js';

export const handler = endpoint(route.loginSubmit, {}, (request) => handleLoginSubmission(request, identityService));
