import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { handleLoginSubmission } from '../../lib/pages/login-submission.js';
import { signInService } from '../../lib/wiring/sign-in.js';

export const handler = endpoint(route.loginSubmit, {}, (request) => handleLoginSubmission(request, signInService));
