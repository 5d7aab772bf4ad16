import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { deviceDecisionBody } from '../../lib/pages/forms.js';
import { answerDevicePage } from '../../lib/pages/device-page.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { deviceAuthorizationService } from '../../lib/wiring/oauth.js';

export const handler = endpoint(route.deviceDecision, { body: deviceDecisionBody, resolveCredential }, (request) =>
  answerDevicePage(request, { deviceAuthorizationService }),
);
