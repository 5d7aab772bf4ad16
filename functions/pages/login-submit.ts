import { endpoint } from '../../lib/http/endpoint.js';
import { handleLoginSubmission } from '../../lib/pages/login-submission.js';
import { identityService } from '../../lib/wiring/identity.js';

export const handler = endpoint('loginSubmit', {}, (request) => handleLoginSubmission(request, identityService));
