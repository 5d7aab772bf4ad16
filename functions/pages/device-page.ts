import { endpoint } from '../../lib/http/endpoint.js';
import * as route from '../../lib/http/routes.js';
import { showDevicePage } from '../../lib/pages/device-page.js';
import { resolveCredential } from '../../lib/wiring/authentication.js';
import { identityService } from '../../lib/wiring/identity.js';
import { deviceAuthorizationService } from '../../lib/wiring/oauth.js';

export const handler = endpoint(route.devicePage, { resolveCredential }, (request) =>
  showDevicePage(request, { identityService, deviceAuthorizationService }),
);
