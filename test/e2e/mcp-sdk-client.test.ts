import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asSession, call, type SignedInUser, signedInUser } from '../support/api-client.js';
import { useStack } from '../support/local-stack.js';
import { s256CodeChallenge } from '../../lib/oauth/pkce.js';
import { authorizationCode, type RegisteredApp, registerApp } from '../support/oauth-flow.js';
import { AGENT_REDIRECT_URL as REDIRECT_URL, AgentProvider, connectedAgent, structuredData } from '../support/mcp-sdk-agent.js';

/**
 * The official TypeScript MCP SDK's own client, with its own OAuth client provider flow and
 * nothing of ours on the client side (test/support/mcp-sdk-agent.ts), signs in to /mcp from a 401
 * alone (docs/mcp.md): RFC 9728 discovery, RFC 8414 discovery, authorization code with PKCE S256
 * and RFC 8707 `resource`, then tool calls, a refresh, and a refusal of a token bound to the REST
 * API; as a pre-registered application, and again by dynamic registration (RFC 7591). The client
 * metadata document journey needs a stack that trusts a test CA: test/e2e/oauth-client-metadata.test.ts.
 * The only thing the test does in the client's stead is the person's part: approving on the consent page.
 */

const stack = useStack();
let person: SignedInUser;
let app: RegisteredApp;
let mcpUrl: URL;
const connectedClient = (provider: AgentProvider) => connectedAgent(stack.baseUrl, person, provider);

beforeAll(async () => {
  person = await signedInUser(stack.baseUrl);
  app = await registerApp(stack.baseUrl, person, {
    name: 'SDK agent',
    redirect_uris: [REDIRECT_URL],
    token_endpoint_auth_method: 'none',
  });
  mcpUrl = new URL('/mcp', stack.baseUrl);
});

describe('the MCP SDK client against /mcp', () => {
  let provider: AgentProvider;
  let client: Client;

  beforeAll(async () => {
    provider = new AgentProvider({ kind: 'preregistered', clientId: app.client_id });
    client = await connectedClient(provider);
  });

  afterAll(async () => {
    await client?.close();
  });

  it('discovers the resource and this server from the 401, and asks with PKCE S256, the resource and the scopes it named', () => {
    const url = provider.authorizationUrl!;
    expect(`${url.origin}${url.pathname}`).toBe(`${stack.baseUrl}/api/v1/oauth/authorize`);
    expect(url.searchParams.get('resource')).toBe(`${stack.baseUrl}/mcp`);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('scope')).toBe('containers:read containers:write');
    expect(url.searchParams.get('client_id')).toBe(app.client_id);
    expect(provider.savedTokens?.access_token).toMatch(/^svat_/);
  });

  it('lists every container tool, with the annotations a client shows before a call', async () => {
    const { tools } = await client.listTools();

    expect(tools.map((tool) => tool.name)).toEqual([
      'list_containers',
      'get_container',
      'create_container',
      'update_container',
      'start_container',
      'stop_container',
      'restart_container',
      'delete_container',
      'get_container_logs',
      'get_container_metrics',
      'get_container_metrics_history',
    ]);
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(byName.get('list_containers')?.annotations).toMatchObject({ readOnlyHint: true });
    expect(byName.get('delete_container')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(byName.get('stop_container')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(byName.get('create_container')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    // The REST body's declaration, read from the same schema: hostname required, cpu_cores from the workload's choices.
    expect(byName.get('create_container')?.inputSchema).toMatchObject({
      required: ['hostname'],
      properties: { hostname: { type: 'string' }, cpu_cores: { enum: [1, 2, 4, 8, 16] } },
    });
  });

  it('creates a container with a tool call that the REST API then shows as the person’s own', async () => {
    const hostname = `mcp-${process.pid}`;
    const created = await client.callTool({ name: 'create_container', arguments: { hostname, command: ['sleep', '30'] } });

    expect(created.isError).toBeUndefined();
    const container = structuredData(created);
    expect(container).toMatchObject({ hostname, state: 'provisioning' });
    const fromRest = await call(stack.baseUrl, 'GET', `/api/v1/containers/${String(container.id)}`, asSession(person));
    expect(fromRest.status).toBe(200);
    expect(fromRest.body.data).toMatchObject({ id: container.id, hostname });
    const listed = await client.callTool({ name: 'list_containers', arguments: { limit: 10 } });
    expect(structuredData(listed).items).toEqual([expect.objectContaining({ id: container.id })]);
  });

  it('answers a failing call as a tool error with the API’s code and message, not a protocol error', async () => {
    const invalid = await client.callTool({ name: 'create_container', arguments: { hostname: 'Not A Hostname' } });
    expect(invalid.isError).toBe(true);
    expect(invalid.structuredContent).toMatchObject({
      error: { code: 'BAD_REQUEST', details: [expect.objectContaining({ field: 'hostname' })] },
    });

    const missing = await client.callTool({ name: 'get_container', arguments: { container_id: '0190c5a1-0000-7000-8000-000000000000' } });
    expect(missing.isError).toBe(true);
    expect(missing.structuredContent).toEqual({ error: { code: 'NOT_FOUND', message: expect.any(String) } });
  });

  it('refreshes with the refresh token when the access token stops working, and carries on', async () => {
    const before = provider.savedTokens!;
    provider.savedTokens = { ...before, access_token: 'svat_revoked' };

    const listed = await client.callTool({ name: 'list_containers', arguments: {} });

    expect(listed.isError).toBeUndefined();
    expect(provider.savedTokens.access_token).toMatch(/^svat_/);
    expect(provider.savedTokens.access_token).not.toBe(before.access_token);
    expect(provider.savedTokens.refresh_token).not.toBe(before.refresh_token);
  });

  it('is refused with a token bound to the REST API, which the REST API itself takes', async () => {
    const verifier = 'v'.repeat(43);
    const code = await authorizationCode(stack.baseUrl, person, app, {
      code_challenge: s256CodeChallenge(verifier),
      code_challenge_method: 'S256',
      resource: `${stack.baseUrl}/api/v1`,
    });
    const bound = await call(stack.baseUrl, 'POST', '/api/v1/oauth/token', {
      body: { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URL, code_verifier: verifier, client_id: app.client_id },
    });
    expect(bound.status).toBe(200);
    expect((await call(stack.baseUrl, 'GET', '/api/v1/containers', { token: bound.body.access_token })).status).toBe(200);

    const holder = new AgentProvider({ kind: 'preregistered', clientId: app.client_id });
    holder.savedTokens = { access_token: bound.body.access_token, token_type: 'Bearer' };
    const refused = await new Client({ name: 'sdk-agent', version: '1.0.0' })
      .connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: holder }))
      .then(
        () => undefined,
        (error: unknown) => error,
      );

    // Without a refresh token the SDK can only send the person to sign in again.
    expect(refused).toBeInstanceOf(UnauthorizedError);
    expect(holder.authorizationUrl?.searchParams.get('resource')).toBe(`${stack.baseUrl}/mcp`);
  });
});

describe('the MCP SDK client that registers itself (RFC 7591)', () => {
  it('registers at the advertised endpoint from a 401 alone, signs in, calls tools and refreshes; the person sees it among authorized applications', async () => {
    const provider = new AgentProvider({ kind: 'dynamic-registration' });
    const client = await connectedClient(provider);
    try {
      const registered = provider.savedClientInformation!;
      expect(registered.client_id).toEqual(expect.any(String));
      expect(registered).not.toHaveProperty('client_secret');
      expect(provider.authorizationUrl?.searchParams.get('client_id')).toBe(registered.client_id);
      expect(provider.authorizationUrl?.searchParams.get('resource')).toBe(`${stack.baseUrl}/mcp`);

      const listed = await client.callTool({ name: 'list_containers', arguments: {} });
      expect(listed.isError).toBeUndefined();
      const authorizations = await call(stack.baseUrl, 'GET', '/api/v1/authorizations', asSession(person));
      expect(authorizations.body.data).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ application: expect.objectContaining({ name: 'SDK agent', kind: 'dynamic_registration' }) }),
        ]),
      );

      const before = provider.savedTokens!;
      provider.savedTokens = { ...before, access_token: 'svat_revoked' };
      expect((await client.callTool({ name: 'list_containers', arguments: {} })).isError).toBeUndefined();
      expect(provider.savedTokens.refresh_token).not.toBe(before.refresh_token);
    } finally {
      await client.close();
    }
  });
});

/** A JSON-RPC POST as a Streamable HTTP client sends it. */
const mcpPost = (token: string | undefined, message: Record<string, unknown>) =>
  call(stack.baseUrl, 'POST', '/mcp', {
    ...(token ? { token } : {}),
    headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
    body: { jsonrpc: '2.0', id: 1, ...message },
  });

describe('/mcp over plain HTTP', () => {
  it('publishes RFC 9728 metadata for itself and for the REST API, naming this service as the authorization server', async () => {
    const mcp = await call(stack.baseUrl, 'GET', '/.well-known/oauth-protected-resource/mcp');
    expect(mcp.status).toBe(200);
    expect(mcp.body).toEqual({
      resource: `${stack.baseUrl}/mcp`,
      authorization_servers: [stack.baseUrl],
      scopes_supported: ['containers:read', 'containers:write'],
      bearer_methods_supported: ['header'],
      resource_name: expect.any(String),
    });
    const rest = await call(stack.baseUrl, 'GET', '/.well-known/oauth-protected-resource');
    expect(rest.body).toMatchObject({ resource: `${stack.baseUrl}/api/v1`, authorization_servers: [stack.baseUrl] });
  });

  it('answers a request without a token 401 with the challenge that leads to that metadata', async () => {
    const refused = await mcpPost(undefined, { method: 'tools/list' });

    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe(
      `Bearer scope="containers:read containers:write", resource_metadata="${stack.baseUrl}/.well-known/oauth-protected-resource/mcp"`,
    );
  });

  it('refuses a session, and takes a personal access token within its scopes: a write tool short of containers:write is 403 insufficient_scope', async () => {
    expect((await mcpPost(person.sessionToken, { method: 'tools/list' })).status).toBe(401);
    const created = await call(stack.baseUrl, 'POST', '/api/v1/tokens', {
      ...asSession(person),
      body: { name: 'agent', scopes: ['containers:read'] },
    });
    const readOnly = created.body.data.token as string;

    const listed = await mcpPost(readOnly, { method: 'tools/call', params: { name: 'list_containers', arguments: {} } });
    expect(listed.status).toBe(200);
    expect(listed.body.result.isError).toBeUndefined();
    const refused = await mcpPost(readOnly, { method: 'tools/call', params: { name: 'create_container', arguments: { hostname: 'x' } } });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", scope="containers:write", resource_metadata="${stack.baseUrl}/.well-known/oauth-protected-resource/mcp"`,
    );
  });

  it('keeps no session: no Mcp-Session-Id, and GET (a server-sent event stream) is 405', async () => {
    const created = await call(stack.baseUrl, 'POST', '/api/v1/tokens', { ...asSession(person), body: { name: 'agent-2' } });
    const initialized = await mcpPost(created.body.data.token, {
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
    });
    expect(initialized.status).toBe(200);
    expect(initialized.headers.get('mcp-session-id')).toBeNull();
    expect(initialized.body.result.serverInfo).toMatchObject({ name: 'container-hosting' });
    expect((await call(stack.baseUrl, 'GET', '/mcp', { token: created.body.data.token })).status).toBe(405);
  });
});
