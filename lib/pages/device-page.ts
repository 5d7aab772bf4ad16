import { HttpError } from '../errors.js';
import type { ApiRequest, AuthenticatedRequest } from '../http/api-request.js';
import { escapeHtml, html, redirect, type Reply } from '../http/reply.js';
import type { IdentityService } from '../identity/identity-service.js';
import { DEVICE_PAGE_PATH, type DeviceAuthorizationService, type Registrant } from '../oauth/device-authorization.js';
import { SCOPE_DESCRIPTIONS } from '../oauth/scopes.js';
import { page, thirdPartyApp } from './layout.js';

/** The services the device pages call; the function modules pass the ones lib/wiring builds. */
export interface DeviceServices {
  identityService: Pick<IdentityService, 'getUser'>;
  deviceAuthorizationService: Pick<DeviceAuthorizationService, 'pendingForUserCode' | 'decide'>;
}

/**
 * RFC 8628 section 5.4: a code someone else sent is the phishing this page must warn of, since
 * approving it hands that person's device access to this account.
 */
const PHISHING_WARNING = `<p class="warning" id="device-warning" role="note"><strong>Only enter a code shown on a device you are using right now.</strong> If someone sent you this code or link, or asked you to enter it, deny: approving lets whoever holds that device act as you.</p>`;

const day = (iso: string) => iso.slice(0, 10);

/** Who made the application: this service, or the account that registered it and when. */
function registrantLine(registrant: Registrant | undefined): string {
  if (registrant?.firstParty) {
    return `<p id="app-registrant">This is <strong>this service's own CLI</strong>, the <code>container-hosting</code> command-line client.</p>`;
  }
  if (!registrant)
    return `<p id="app-registrant">This application was registered by another account of this service, not by the service itself.</p>`;
  const who = registrant.email ? `<strong>${escapeHtml(registrant.email)}</strong>` : 'an account that no longer exists';
  return `<p id="app-registrant">Not made by this service: registered by ${who} on <strong>${escapeHtml(day(registrant.registeredAt))}</strong>.</p>`;
}

const CODE_INPUT_STYLE =
  'width:100%;box-sizing:border-box;padding:.55rem;border:1px solid #b8bfcc;border-radius:4px;font-size:1.3rem;letter-spacing:.15em;text-transform:uppercase';

function enterCodePage(action: string, error?: string, typed = ''): string {
  return page(
    'Connect a device',
    `<h1>Connect a device</h1>
${error ? `<p class="error" role="alert" id="device-error">${escapeHtml(error)}</p>` : ''}
<p>Enter the code shown on your device or terminal.</p>
${PHISHING_WARNING}
<form method="get" action="${escapeHtml(action)}">
  <label for="user_code">Code</label>
  <input id="user_code" name="user_code" value="${escapeHtml(typed)}" placeholder="XXXX-XXXX" autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="20" required style="${CODE_INPUT_STYLE}">
  <button type="submit">Continue</button>
</form>`,
  );
}

interface ConfirmView {
  action: string;
  csrfToken: string;
  userCode: string;
  appName: string;
  appDescription: string;
  registrant: Registrant | undefined;
  scopes: readonly (keyof typeof SCOPE_DESCRIPTIONS)[];
  userEmail: string;
}

function confirmPage(view: ConfirmView): string {
  const scopes = view.scopes
    .map((scope) => `<li><strong>${escapeHtml(scope)}</strong>: ${escapeHtml(SCOPE_DESCRIPTIONS[scope])}</li>`)
    .join('\n');
  // Only the service's own CLI is named in the heading; another application's name and description are quoted as its registrant wrote them.
  const about = view.registrant?.firstParty
    ? {
        title: `Connect ${view.appName}`,
        html: `<h1>Connect <span id="app-name">${escapeHtml(view.appName)}</span>?</h1>
${view.appDescription ? `<p id="app-description">${escapeHtml(view.appDescription)}</p>` : ''}`,
      }
    : {
        title: 'Connect an application not made by this service',
        html: `<h1>Connect an application not made by this service?</h1>\n${thirdPartyApp(view.appName, view.appDescription)}`,
      };
  return page(
    about.title,
    `${about.html}
${registrantLine(view.registrant)}
${PHISHING_WARNING}
<p>Code <strong id="user-code">${escapeHtml(view.userCode)}</strong>: check that your device shows the same one.</p>
<p>Signed in as <strong id="user-email">${escapeHtml(view.userEmail)}</strong>. The device asks to act on your behalf:</p>
<ul class="scopes" id="scopes">
${scopes}
</ul>
<form method="post" action="${escapeHtml(view.action)}">
  <input type="hidden" name="csrf_token" value="${escapeHtml(view.csrfToken)}">
  <input type="hidden" name="user_code" value="${escapeHtml(view.userCode)}">
  <button type="submit" name="decision" value="approve">Approve</button>
  <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>`,
  );
}

function donePage(approved: boolean): string {
  return approved
    ? page('Device connected', '<h1 id="device-done">Device connected</h1>\n<p>You can close this page and return to your device.</p>')
    : page(
        'Device not connected',
        '<h1 id="device-done">Device not connected</h1>\n<p>You denied the request. Your device will say so.</p>',
      );
}

/**
 * GET /device (RFC 8628 section 3.3): without a session, through the sign-in page and back;
 * without `user_code`, a form to type it; with one, what the device asks for and Approve / Deny.
 */
export async function showDevicePage(request: ApiRequest, { identityService, deviceAuthorizationService }: DeviceServices): Promise<Reply> {
  const action = `${request.basePath}${DEVICE_PAGE_PATH}`;
  const typed = request.query.user_code;
  const principal = request.principal;
  if (principal?.kind !== 'session' || !principal.csrfToken) {
    const next = typed ? `${DEVICE_PAGE_PATH}?user_code=${encodeURIComponent(typed)}` : DEVICE_PAGE_PATH;
    return redirect(`${request.basePath}/login?next=${encodeURIComponent(next)}`);
  }
  const done = request.query.done;
  if (done === 'approved' || done === 'denied') return html(200, donePage(done === 'approved'));
  if (!typed) return html(200, enterCodePage(action));
  try {
    const [pending, user] = await Promise.all([
      deviceAuthorizationService.pendingForUserCode(principal, typed),
      identityService.getUser(principal.userId),
    ]);
    return html(
      200,
      confirmPage({
        action,
        csrfToken: principal.csrfToken,
        userCode: pending.userCode,
        appName: pending.app.name,
        appDescription: pending.app.description,
        registrant: pending.registrant,
        scopes: pending.scopes,
        userEmail: user.email,
      }),
    );
  } catch (error) {
    if (error instanceof HttpError) return html(error.statusCode, enterCodePage(action, error.message, typed.slice(0, 20)), error.headers);
    throw error;
  }
}

export interface DeviceDecision {
  user_code: string;
  decision: 'approve' | 'deny';
}

/** POST /device: the decision, once; 303 to a page that says what happened, so a reload never posts again. */
export async function answerDevicePage(
  request: AuthenticatedRequest<DeviceDecision>,
  { deviceAuthorizationService }: Pick<DeviceServices, 'deviceAuthorizationService'>,
): Promise<Reply> {
  const action = `${request.basePath}${DEVICE_PAGE_PATH}`;
  try {
    await deviceAuthorizationService.decide(request.principal, request.body.user_code, request.body.decision);
  } catch (error) {
    if (error instanceof HttpError) return html(error.statusCode, enterCodePage(action, error.message), error.headers);
    throw error;
  }
  return redirect(`${action}?done=${request.body.decision === 'approve' ? 'approved' : 'denied'}`, 303);
}
