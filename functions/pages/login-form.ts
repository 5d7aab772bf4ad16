import { endpoint } from '../../lib/http/endpoint.js';
import { loginPageReply } from '../../lib/pages/login-page.js';

export const handler = endpoint('loginPage', {}, (request) => loginPageReply(request));
