import type { APIGatewayProxyResult } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from '../../../lib/containers/container.js';
import { ALL_SCOPES, type Principal } from '../../../lib/identity/principal.js';
import { pollUntil } from '../../support/poll.js';
import { captureOutput } from '../../support/captured-output.js';
import { lambdaContext, proxyEvent } from '../../support/lambda-event.js';
import { nginxWorkload } from '../../support/workloads.js';

// The metrics read their settings when they load, so the modules are imported after these.
Object.assign(process.env, { POWERTOOLS_SERVICE_NAME: 'TestStack', POWERTOOLS_METRICS_DISABLED: 'false' });

const REDIRECT_URI = 'http://127.0.0.1:9999/callback';
/** The issuer the consent page names in `iss` (RFC 9207). */
const ISSUER = 'https://api.example.com';
type Handler = (event: never, context: never) => Promise<APIGatewayProxyResult>;
let tokenHandler: Handler;
let client: { clientId: string; clientSecret: string };
let code: string;

beforeAll(async () => {
  const { identityService } = await import('../../../lib/wiring/identity.js');
  const { applicationService, authorizationService } = await import('../../../lib/wiring/oauth.js');
  ({ handler: tokenHandler } = (await import('../../../functions/oauth/token.js')) as unknown as { handler: Handler });
  const principalOf = async (): Promise<Principal> => {
    const user = await identityService.createUser({
      email: `${randomUUID()}@example.com`,
      password: 'correct horse battery',
      role: 'user',
    });
    return {
      userId: user.id,
      role: 'user',
      kind: 'session',
      scopes: ALL_SCOPES,
      credentialHash: 'unused',
      expiresAt: '2999-01-01T00:00:00.000Z',
    };
  };
  const owner = await principalOf();
  const { app, clientSecret } = await applicationService.registerApp(owner, {
    name: 'Metrics',
    description: '',
    redirectUris: [REDIRECT_URI],
  });
  client = { clientId: app.clientId, clientSecret: clientSecret! };
  const requestId = await authorizationService.startAuthorization({
    clientId: app.clientId,
    redirectUri: REDIRECT_URI,
    state: 's',
    scopes: [...ALL_SCOPES],
  });
  code = new URL(await authorizationService.approveAuthorization(await principalOf(), requestId, ISSUER)).searchParams.get('code')!;
});

const tokenRequest = (fields: Record<string, string>) =>
  tokenHandler(
    proxyEvent({
      method: 'POST',
      path: '/api/v1/oauth/token',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: client.clientId, client_secret: client.clientSecret, ...fields }).toString(),
    }) as never,
    lambdaContext() as never,
  );

/** The EMF lines written while `act` ran. */
async function emfLinesOf(act: () => Promise<unknown>): Promise<{ lines: Array<Record<string, any>>; text: string }> {
  const output = captureOutput();
  try {
    await act();
  } finally {
    output.restore();
  }
  return { lines: output.lines().filter((line) => line._aws !== undefined), text: output.text() };
}

describe('EMF metrics of the token endpoint', () => {
  it('counts a token grant by grant type, and a refresh token presented twice as reuse', async () => {
    // Act: the code grant, one refresh, then the first refresh token again once its successor was
    // used (within the retry grace, before that, it would be a retry: docs/oauth.md, "Refresh retries").
    let refreshToken = '';
    let successor = '';
    const grant = await emfLinesOf(async () => {
      const response = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
      expect(response.statusCode).toBe(200);
      refreshToken = JSON.parse(response.body).refresh_token;
    });
    const refresh = await emfLinesOf(async () => {
      const response = await tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken });
      expect(response.statusCode).toBe(200);
      successor = JSON.parse(response.body).refresh_token;
    });
    await emfLinesOf(async () => {
      expect((await tokenRequest({ grant_type: 'refresh_token', refresh_token: successor })).statusCode).toBe(200);
    });
    const reuse = await emfLinesOf(async () => {
      expect((await tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken })).statusCode).toBe(400);
    });

    // Assess: each count is its own EMF document, in the namespace and dimensions the alarms read.
    const grants = grant.lines.filter((line) => line.TokenGrants !== undefined);
    expect(grants).toHaveLength(1);
    expect(grants[0]).toEqual({
      _aws: {
        Timestamp: expect.any(Number),
        CloudWatchMetrics: [
          { Namespace: 'ContainerHosting', Dimensions: [['service', 'grantType']], Metrics: [{ Name: 'TokenGrants', Unit: 'Count' }] },
        ],
      },
      service: 'TestStack',
      grantType: 'authorization_code',
      TokenGrants: 1,
    });
    expect(grant.lines.find((line) => line.Requests !== undefined)).toMatchObject({ route: 'token', statusClass: '2xx', Requests: 1 });
    expect(refresh.lines.find((line) => line.TokenGrants !== undefined)).toMatchObject({ grantType: 'refresh_token', TokenGrants: 1 });

    const reuseLines = reuse.lines.filter((line) => line.RefreshTokenReuseDetected !== undefined);
    expect(reuseLines).toHaveLength(1);
    expect(reuseLines[0]!._aws.CloudWatchMetrics[0]).toEqual({
      Namespace: 'ContainerHosting',
      Dimensions: [['service']],
      Metrics: [{ Name: 'RefreshTokenReuseDetected', Unit: 'Count' }],
    });
    expect(reuse.lines.filter((line) => line.TokenGrants !== undefined)).toEqual([]);
    expect(reuse.lines.find((line) => line.Requests !== undefined)).toMatchObject({ route: 'token', statusClass: '4xx' });
    // No credential in what was written.
    for (const { text } of [grant, refresh, reuse]) {
      expect(text).not.toContain(client.clientSecret);
      expect(text).not.toContain(refreshToken);
      expect(text).not.toContain(successor);
      expect(text).not.toContain(code);
    }
  });
});

describe('EMF metrics of the container fleet', () => {
  const owner: Caller = { userId: randomUUID(), role: 'user' };
  let counter = 0;
  const spec = () => ({
    hostname: `metrics-${process.pid}-${(counter += 1)}`,
    ...nginxWorkload(),
    memoryMb: 2048,
    diskGb: 21,
    restartPolicy: 'never' as const,
  });
  /** A container service on the local runtime, whose processes run `command`. */
  async function serviceRunning(command: string) {
    const { config } = await import('../../../lib/config.js');
    const { ContainerService } = await import('../../../lib/containers/container-service.js');
    const { LocalMetrics } = await import('../../../lib/local/local-metrics.js');
    const { LocalRuntime } = await import('../../../lib/local/local-runtime.js');
    const { containerStore } = await import('../../../lib/wiring/containers.js');
    const runtime = new LocalRuntime({ rootDir: config.LOCAL_CONTAINER_DIR, command, readyAfterMs: 100 });
    const service = new ContainerService(containerStore, runtime, new LocalMetrics(runtime), { startBudgetMs: 5000 });
    runtime.onTaskStatus((status) => service.applyTaskStatus(status));
    return { service, containerStore };
  }
  const counts = (lines: Array<Record<string, any>>) =>
    lines.flatMap((line) => line._aws.CloudWatchMetrics[0].Metrics.map((metric: { Name: string }) => metric.Name)).sort();

  it('counts a container created, launched and failed when its process exits before it runs', async () => {
    // Prepare
    const { service, containerStore } = await serviceRunning('exit 1');
    // Act: the state is written before it is counted, so the test waits for the count itself.
    const output = captureOutput();
    let lines: Array<Record<string, any>> = [];
    try {
      const created = await service.create(owner, spec());
      lines = await pollUntil(
        async () => output.lines().filter((line) => line._aws !== undefined),
        (written) => counts(written).includes('ContainersFailed'),
      );
      expect((await containerStore.get(created.id))?.state).toBe('failed');
    } finally {
      output.restore();
    }
    // Assess
    expect(counts(lines)).toEqual(['ContainersCreated', 'ContainersFailed', 'ContainersLaunched']);
    for (const line of lines) expect(line._aws.CloudWatchMetrics[0].Dimensions).toEqual([['service']]);
  });

  it('counts a container reaching running once, though both the start and the runtime report it', async () => {
    // Prepare
    // A server on $PORT: the runtime reports RUNNING once it answers.
    const { service } = await serviceRunning('exec busybox httpd -f -p 127.0.0.1:$PORT -h .');
    // Act: the start waits for RUNNING while the runtime reports it too.
    const { lines } = await emfLinesOf(async () => {
      const created = await service.create(owner, spec());
      expect((await service.start(owner, created.id)).state).toBe('running');
      await service.stop(owner, created.id);
    });
    // Assess
    expect(counts(lines)).toEqual(['ContainersCreated', 'ContainersLaunched', 'ContainersStarted']);
  });
});
