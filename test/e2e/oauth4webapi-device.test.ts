import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as oauth from 'oauth4webapi';
import { beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../lib/identity/secrets.js';
import { documentClient, tableName } from '../../lib/store/dynamo.js';
import { keys } from '../../lib/store/keys.js';
import { call, signedInUser, type SignedInUser } from '../support/api-client.js';
import { useStack } from '../support/local-stack.js';
import { formBody, registerApp, type RegisteredApp } from '../support/oauth-flow.js';

/** A stock client library completes the device authorization grant (RFC 8628) against the local stack. */

const stack = useStack();
let person: SignedInUser;
let app: RegisteredApp;
let server: oauth.AuthorizationServer;

/** Plain http is allowed only because the stack listens on loopback. */
const insecure = { [oauth.allowInsecureRequests]: true } as const;

beforeAll(async () => {
  const developer = await signedInUser(stack.baseUrl);
  person = await signedInUser(stack.baseUrl);
  app = await registerApp(stack.baseUrl, developer, {
    name: 'Library device',
    redirect_uris: ['http://127.0.0.1:8765/callback'],
    token_endpoint_auth_method: 'none',
  });
  const issuer = new URL(stack.baseUrl);
  server = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
});

describe('oauth4webapi and the device authorization grant', () => {
  it('discovers the endpoint, sees authorization_pending, then gets tokens for a public client once approved', async () => {
    const client: oauth.Client = { client_id: app.client_id };
    const started = await oauth.processDeviceAuthorizationResponse(
      server,
      client,
      await oauth.deviceAuthorizationRequest(server, client, oauth.None(), { scope: 'containers:read' }, insecure),
    );
    expect(started.interval).toBe(5);

    const poll = async () =>
      oauth.processDeviceCodeResponse(
        server,
        client,
        await oauth.deviceCodeGrantRequest(server, client, oauth.None(), started.device_code, insecure),
      );
    const pending = await poll().catch((error: unknown) => error);
    expect(pending).toBeInstanceOf(oauth.ResponseBodyError);
    expect(pending).toMatchObject({ error: 'authorization_pending' });

    const approved = await call(stack.baseUrl, 'POST', '/device', {
      headers: { cookie: person.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: formBody({ csrf_token: person.csrfToken, user_code: started.user_code, decision: 'approve' }),
    });
    expect(approved.status).toBe(303);
    // The library would wait `interval` seconds; the test moves the last poll back instead.
    await documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.deviceAuthorization(sha256Hex(started.device_code)),
        UpdateExpression: 'REMOVE last_polled_at',
      }),
    );
    const tokens = await poll();

    expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'containers:read', refresh_token: expect.stringMatching(/^svrt_/) });
    const containers = await call(stack.baseUrl, 'GET', '/api/v1/containers', { token: tokens.access_token });
    expect(containers.status).toBe(200);
  });
});
