import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { SignedInUser } from './api-client.js';
import { decide } from './oauth-flow.js';

/**
 * The official MCP SDK's client as an agent runs it (docs/mcp.md): every protocol step is the
 * SDK's; the provider below is only what the SDK asks a host application for (storage and the
 * browser hop), and the person's part, approving on the consent page, is done by the test.
 */

/** Where the agent listens for the redirect: a loopback port of its own, as native clients do. */
export const AGENT_REDIRECT_URL = 'http://127.0.0.1:8976/callback';

/** How the agent tells the server who it is, the three ways the MCP authorization specification allows. */
export type AgentIdentity =
  | { kind: 'preregistered'; clientId: string }
  | { kind: 'metadata-document'; url: string }
  | { kind: 'dynamic-registration' };

export class AgentProvider implements OAuthClientProvider {
  savedTokens: OAuthTokens | undefined;
  savedClientInformation: OAuthClientInformationMixed | undefined;
  authorizationUrl: URL | undefined;
  private verifier = '';
  /** Only an agent that keeps what the server gave it may register (the SDK checks that this exists). */
  readonly saveClientInformation?: (information: OAuthClientInformationMixed) => void;

  constructor(private readonly identity: AgentIdentity) {
    if (identity.kind !== 'preregistered') {
      this.saveClientInformation = (information) => {
        this.savedClientInformation = information;
      };
    }
  }

  get redirectUrl(): string {
    return AGENT_REDIRECT_URL;
  }

  /** What a dynamic registration sends (RFC 7591); a metadata document says the same on its own host. */
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'SDK agent', redirect_uris: [AGENT_REDIRECT_URL], token_endpoint_auth_method: 'none' };
  }

  /** The SDK uses it as the client_id when the server advertises client_id_metadata_document_supported. */
  get clientMetadataUrl(): string | undefined {
    return this.identity.kind === 'metadata-document' ? this.identity.url : undefined;
  }

  /** The SDK sends `state` only when the provider makes one; this server requires it (docs/oauth.md). */
  state(): string {
    return randomBytes(16).toString('base64url');
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    if (this.identity.kind === 'preregistered') return { client_id: this.identity.clientId };
    return this.savedClientInformation;
  }

  tokens(): OAuthTokens | undefined {
    return this.savedTokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.savedTokens = tokens;
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    this.authorizationUrl = authorizationUrl;
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.verifier = codeVerifier;
  }

  codeVerifier(): string {
    return this.verifier;
  }
}

/** The person's part: the authorization URL in a browser, Approve on the consent page; the code from the redirect. */
export async function approveInBrowser(baseUrl: string, person: SignedInUser, authorizationUrl: URL): Promise<string> {
  const authorize = await fetch(authorizationUrl, { redirect: 'manual' });
  expect(authorize.status).toBe(302);
  const requestId = new URL(authorize.headers.get('location')!, baseUrl).searchParams.get('request')!;
  const approved = await decide(baseUrl, person, requestId, 'approve');
  expect(approved.status).toBe(303);
  const redirect = new URL(approved.headers.get('location')!);
  expect(redirect.searchParams.get('state')).toBe(authorizationUrl.searchParams.get('state'));
  return redirect.searchParams.get('code')!;
}

/** Connects the SDK's client as its documentation shows: try, sign in on UnauthorizedError, finish, connect again. */
export async function connectedAgent(baseUrl: string, person: SignedInUser, provider: AgentProvider): Promise<Client> {
  const mcpUrl = new URL('/mcp', baseUrl);
  const client = new Client({ name: 'sdk-agent', version: '1.0.0' });
  const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
  const refused = await client.connect(first).then(
    () => undefined,
    (error: unknown) => error,
  );
  if (refused === undefined) return client;
  expect(refused).toBeInstanceOf(UnauthorizedError);
  await first.finishAuth(await approveInBrowser(baseUrl, person, provider.authorizationUrl!));
  const signedIn = new Client({ name: 'sdk-agent', version: '1.0.0' });
  await signedIn.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
  return signedIn;
}

/** A tool result's `data`, as the container tools answer. */
export const structuredData = (result: unknown) =>
  (result as { structuredContent: { data: Record<string, unknown> } }).structuredContent.data;
