import { endpoint } from '../../lib/http/endpoint.js';
import { handleLoginSubmission } from '../../lib/pages/login-submission.js';

export const handler = endpoint('loginSubmit', {}, (request) => handleLoginSubmission(request));
