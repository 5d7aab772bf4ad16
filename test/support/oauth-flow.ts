import { asSession, call, type ApiResponse, type SignedInUser } from './api-client.js';

/** An application as registration returns it, secret included. */
export interface RegisteredApp {
  id: string;
  client_id: string;
  client_secret: string;
  name: string;
  description: string;
  redirect_uris: string[];
  created_at: string;
}

export const basicAuthorization = (clientId: string, clientSecret: string): string =>
  `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`;

export const formBody = (fields: Record<string, string>): string => new URLSearchParams(fields).toString();

export { asSession };

export async function registerApp(baseUrl: string, owner: SignedInUser, body: Record<string, unknown>): Promise<RegisteredApp> {
  const response = await call(baseUrl, 'POST', '/api/v1/oauth/apps', { ...asSession(owner), body });
  if (response.status !== 200) throw new Error(`registration failed: ${response.status} ${response.text}`);
  return response.body.data;
}

export const authorizePath = (parameters: Record<string, string>): string =>
  `/api/v1/oauth/authorize?${new URLSearchParams(parameters).toString()}`;

/** GET authorize; returns the pending request id from the consent-page redirect. */
export async function startAuthorization(baseUrl: string, parameters: Record<string, string>): Promise<string> {
  const response = await call(baseUrl, 'GET', authorizePath(parameters));
  if (response.status !== 302) throw new Error(`authorize failed: ${response.status} ${response.text}`);
  return new URL(response.headers.get('location')!, baseUrl).searchParams.get('request')!;
}

/** POSTs the consent form as the signed-in user, the way the page's form does. */
export function decide(baseUrl: string, who: SignedInUser, requestId: string, decision: 'approve' | 'deny'): Promise<ApiResponse> {
  return call(baseUrl, 'POST', '/oauth/consent', {
    headers: { cookie: who.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    rawBody: formBody({ csrf_token: who.csrfToken, request: requestId, decision }),
  });
}

/** Authorize and approve; returns the redirect the browser would follow, with the code. */
export async function approvedRedirect(
  baseUrl: string,
  who: SignedInUser,
  app: RegisteredApp,
  extra: Record<string, string> = {},
): Promise<URL> {
  const requestId = await startAuthorization(baseUrl, {
    response_type: 'code',
    client_id: app.client_id,
    redirect_uri: app.redirect_uris[0]!,
    state: 'state-123',
    ...extra,
  });
  const response = await decide(baseUrl, who, requestId, 'approve');
  if (response.status !== 303) throw new Error(`consent failed: ${response.status} ${response.text}`);
  return new URL(response.headers.get('location')!);
}

export async function authorizationCode(
  baseUrl: string,
  who: SignedInUser,
  app: RegisteredApp,
  extra: Record<string, string> = {},
): Promise<string> {
  return (await approvedRedirect(baseUrl, who, app, extra)).searchParams.get('code')!;
}

/** The token endpoint with the spec's JSON body and body credentials. */
export function tokenRequest(baseUrl: string, app: RegisteredApp, parameters: Record<string, string>): Promise<ApiResponse> {
  return call(baseUrl, 'POST', '/api/v1/oauth/token', {
    body: { client_id: app.client_id, client_secret: app.client_secret, ...parameters },
  });
}

export interface IssuedTokens {
  access_token: string;
  refresh_token: string;
  token_type: string;
  expires_in: number;
  scope: string;
}

export async function issuedTokens(baseUrl: string, who: SignedInUser, app: RegisteredApp, scope?: string): Promise<IssuedTokens> {
  const code = await authorizationCode(baseUrl, who, app, scope ? { scope } : {});
  const response = await tokenRequest(baseUrl, app, { grant_type: 'authorization_code', code, redirect_uri: app.redirect_uris[0]! });
  if (response.status !== 200) throw new Error(`code exchange failed: ${response.status} ${response.text}`);
  return response.body;
}
