import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repositoryRoot } from '../../infra/paths.js';
import { s256CodeChallenge } from '../../lib/oauth/pkce.js';
import { asSession, call, signedInUser, type SignedInUser } from '../support/api-client.js';
import { authorizePath, decide, formBody } from '../support/oauth-flow.js';
import { AGENT_REDIRECT_URL, AgentProvider, connectedAgent, structuredData } from '../support/mcp-sdk-agent.js';

/**
 * Client ID Metadata Documents (docs/oauth.md, "Client metadata documents") against the local
 * stack, run as `npm start` runs it, because Node reads NODE_EXTRA_CA_CERTS only when a process
 * starts: the stack trusts a CA this file makes with openssl, and fetches documents from an https
 * server on loopback that OAUTH_CLIENT_METADATA_ALLOWED_HOSTS admits.
 */

let workDir: string;
let documents: Server;
let documentOrigin: string;
let stackProcess: ChildProcess;
let baseUrl: string;
let person: SignedInUser;

const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: workDir, stdio: 'ignore' });

function makeCertificates(): { key: Buffer; cert: Buffer } {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=client metadata test CA');
  openssl('req', ...ec, '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=localhost');
  writeFileSync(join(workDir, 'leaf.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  openssl(
    'x509',
    '-req',
    '-in',
    'leaf.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'leaf.pem',
    '-days',
    '1',
    '-extfile',
    'leaf.ext',
  );
  return { key: readFileSync(join(workDir, 'leaf.key')), cert: readFileSync(join(workDir, 'leaf.pem')) };
}

const documentUrl = (path: string) => `${documentOrigin}${path}`;

/** What the document server answers for each path. */
function serveDocuments(request: { url?: string }, response: import('node:http').ServerResponse) {
  const json = (body: unknown, headers: Record<string, string> = {}) => {
    response.writeHead(200, { 'content-type': 'application/json', ...headers });
    response.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
  const document = (clientId: string) => ({
    client_id: clientId,
    client_name: 'Docs Agent',
    redirect_uris: ['http://127.0.0.1/callback'],
    token_endpoint_auth_method: 'none',
  });
  switch (request.url) {
    case '/agent.json':
      return json(document(documentUrl('/agent.json')), { 'cache-control': 'max-age=60' });
    case '/sdk-agent.json':
      return json({ ...document(documentUrl('/sdk-agent.json')), client_name: 'SDK agent', redirect_uris: [AGENT_REDIRECT_URL] });
    case '/impostor.json':
      return json(document(documentUrl('/agent.json')));
    case '/large.json':
      return json({ ...document(documentUrl('/large.json')), padding: 'x'.repeat(6000) });
    case '/moved.json':
      response.writeHead(302, { location: '/agent.json' });
      return void response.end();
    default:
      response.writeHead(404);
      response.end();
  }
}

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'client-metadata-'));
  documents = createServer(makeCertificates(), serveDocuments);
  await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
  documentOrigin = `https://localhost:${(documents.address() as AddressInfo).port}`;

  stackProcess = spawn(process.execPath, ['--import', 'tsx', 'scripts/local.ts'], {
    cwd: repositoryRoot,
    env: {
      ...process.env,
      PORT: '0',
      DATA_DIR: join(workDir, 'data'),
      CONTAINER_RUNTIME: 'process',
      NODE_EXTRA_CA_CERTS: join(workDir, 'ca.pem'),
      OAUTH_CLIENT_METADATA_ALLOWED_HOSTS: new URL(documentOrigin).host,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  baseUrl = await new Promise<string>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`the stack did not start: ${output}`)), 55_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const listening = /listening on (http:\/\/\S+)/.exec(output);
      if (listening) {
        clearTimeout(timer);
        resolve(listening[1]!);
      }
    };
    stackProcess.stdout!.on('data', read);
    stackProcess.stderr!.on('data', read);
  });
  person = await signedInUser(baseUrl);
});

afterAll(async () => {
  if (stackProcess && stackProcess.exitCode === null) {
    const exited = new Promise((resolve) => stackProcess.once('exit', resolve));
    stackProcess.kill('SIGTERM');
    await exited;
  }
  documents?.close();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

const authorizeAs = (clientId: string, redirectUri = 'http://127.0.0.1:50123/callback', challenge = s256CodeChallenge('v'.repeat(43))) =>
  call(
    baseUrl,
    'GET',
    authorizePath({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      state: 'cimd',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }),
  );

const tokenRequest = (fields: Record<string, string>) =>
  call(baseUrl, 'POST', '/api/v1/oauth/token', {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    rawBody: formBody(fields),
  });

describe('client metadata documents', () => {
  it('advertises them, and runs authorize, consent and the token endpoint for a document on an admitted host', async () => {
    const clientId = documentUrl('/agent.json');
    const verifier = randomBytes(32).toString('base64url');
    const metadata = await call(baseUrl, 'GET', '/.well-known/oauth-authorization-server');

    const started = await authorizeAs(clientId, 'http://127.0.0.1:50123/callback', s256CodeChallenge(verifier));
    const requestId = new URL(started.headers.get('location')!, baseUrl).searchParams.get('request')!;
    const consent = await call(baseUrl, 'GET', `/oauth/consent?request=${requestId}`, { headers: { cookie: person.cookie } });
    const location = new URL((await decide(baseUrl, person, requestId, 'approve')).headers.get('location')!);
    const tokens = await tokenRequest({
      grant_type: 'authorization_code',
      code: location.searchParams.get('code')!,
      redirect_uri: 'http://127.0.0.1:50123/callback',
      client_id: clientId,
      code_verifier: verifier,
    });
    const refreshed = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: clientId });

    expect(metadata.body).toMatchObject({ client_id_metadata_document_supported: true });
    expect(metadata.body.token_endpoint_auth_methods_supported).toContain('none');
    expect(started.status).toBe(302);
    expect(consent.text).toContain('Docs Agent');
    expect(consent.text).toContain(new URL(documentOrigin).host);
    expect(consent.text).toContain('This service did not review this application');
    expect(tokens.status).toBe(200);
    expect(refreshed.status).toBe(200);
    expect((await call(baseUrl, 'GET', '/api/v1/users/me', { token: refreshed.body.access_token })).status).toBe(200);
    // The person finds it under their authorized applications, by its URL, and can revoke it on that page.
    const listed = await call(baseUrl, 'GET', '/api/v1/authorizations', asSession(person));
    expect(listed.body.data).toEqual([
      expect.objectContaining({ id: clientId, application: expect.objectContaining({ name: 'Docs Agent', kind: 'metadata_document' }) }),
    ]);
    const revoked = await call(baseUrl, 'POST', '/settings/authorizations', {
      headers: { cookie: person.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: formBody({ csrf_token: person.csrfToken, authorization: clientId }),
    });
    expect(revoked.status).toBe(303);
    expect((await call(baseUrl, 'GET', '/api/v1/users/me', { token: refreshed.body.access_token })).status).toBe(401);
  });

  it('binds the flow to the redirect URIs the document lists', async () => {
    const response = await authorizeAs(documentUrl('/agent.json'), 'http://127.0.0.2:50123/elsewhere');

    expect(response.status).toBe(400);
    expect(response.body.error.message).toBe('redirect_uri is not registered for this application');
  });

  it.each([
    ['on a private address', () => 'https://10.255.255.1/agent.json', /non-public address/],
    ['on loopback without being admitted', () => documentUrl('/agent.json').replace('localhost', '127.0.0.1'), /non-public address/],
    ['whose client_id is another URL', () => documentUrl('/impostor.json'), /names another client_id than its own URL/],
    ['over 5 KiB', () => documentUrl('/large.json'), /larger than 5 KiB/],
    ['that redirects', () => documentUrl('/moved.json'), /redirected \(302\); redirects are not followed/],
  ])('refuses a document %s with a clear invalid_client (401)', async (_case, clientIdOf, message) => {
    const response = await authorizeAs(clientIdOf());

    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('UNAUTHORIZED');
    expect(response.body.error.message).toMatch(/^invalid_client: /);
    expect(response.body.error.message).toMatch(message);
  });
});

describe('the MCP SDK client identified by a client metadata document', () => {
  it('signs in to /mcp with its document URL as client_id, from a 401 alone, without registering, and calls tools', async () => {
    const url = documentUrl('/sdk-agent.json');
    const provider = new AgentProvider({ kind: 'metadata-document', url });
    const client = await connectedAgent(baseUrl, person, provider);
    try {
      expect(provider.authorizationUrl?.searchParams.get('client_id')).toBe(url);
      expect(provider.authorizationUrl?.searchParams.get('resource')).toBe(`${baseUrl}/mcp`);
      expect(provider.savedClientInformation?.client_id).toBe(url);
      const hostname = `cimd-${process.pid}`;
      const created = await client.callTool({ name: 'create_container', arguments: { hostname, command: ['sleep', '30'] } });
      expect(created.isError).toBeUndefined();
      const fromRest = await call(baseUrl, 'GET', `/api/v1/containers/${String(structuredData(created).id)}`, asSession(person));
      expect(fromRest.body.data).toMatchObject({ hostname });

      const before = provider.savedTokens!;
      provider.savedTokens = { ...before, access_token: 'svat_revoked' };
      expect((await client.callTool({ name: 'list_containers', arguments: {} })).isError).toBeUndefined();
      expect(provider.savedTokens.refresh_token).not.toBe(before.refresh_token);

      // The person revokes it through the API, naming it by its URL (percent-encoded, slashes and all).
      const revoked = await call(baseUrl, 'DELETE', `/api/v1/authorizations/${encodeURIComponent(url)}`, asSession(person));
      expect(revoked.status).toBe(200);
      expect((await call(baseUrl, 'GET', '/api/v1/containers', { token: provider.savedTokens.access_token })).status).toBe(401);
    } finally {
      await client.close();
    }
  });
});
