import { tableAccess } from '../../table-access.js';
import { containerUpdate } from './containers.js';
import { authenticated, type Route, route } from './route.js';

/** Agents: the MCP server and the RFC 9728 metadata that leads a client to this service's OAuth (docs/mcp.md). */

export const mcpServer = /* @__PURE__ */ route({
  id: 'mcpServer',
  method: 'POST',
  path: '/mcp',
  handler: 'functions/mcp/serve.ts',
  access: 'mcp',
  body: 'json',
  // Every container tool's reach: what the container routes it stands for may touch, together.
  permissions: /* @__PURE__ */ authenticated(
    /* @__PURE__ */ tableAccess(containerUpdate, {
      read: ['containersOfOwner', 'allContainers', 'container'],
      write: ['container', 'hostname'],
    }),
    { ecs: ['run', 'stop', 'describe'], metrics: true, logs: true, registryCredentials: true },
  ),
  // start_container and restart_container wait for their task, as their REST twins do.
  timeoutSeconds: 29,
  answers: { jsonRpc: 'McpMessage' },
  summary:
    'The MCP server (Streamable HTTP, stateless, JSON responses): one JSON-RPC message or batch per POST; tools for containers, their logs and metrics (docs/mcp.md)',
});

export const mcpResourceMetadata = /* @__PURE__ */ route({
  id: 'mcpResourceMetadata',
  method: 'GET',
  path: '/.well-known/oauth-protected-resource/mcp',
  handler: 'functions/mcp/resource-metadata.ts',
  access: 'public',
  body: 'none',
  permissions: { table: 'none' },
  answers: { bare: 'ProtectedResourceMetadata' },
  summary: "The MCP server's protected resource metadata (RFC 9728): its URI, this service as its authorization server, its scopes",
});

export const apiResourceMetadata = /* @__PURE__ */ route({
  id: 'apiResourceMetadata',
  method: 'GET',
  path: '/.well-known/oauth-protected-resource',
  handler: 'functions/mcp/api-resource-metadata.ts',
  access: 'public',
  body: 'none',
  permissions: { table: 'none' },
  answers: { bare: 'ProtectedResourceMetadata' },
  summary: "The REST API's protected resource metadata (RFC 9728): its URI ({issuer}/api/v1), this service as its authorization server",
});

/** This area's rows, in the order the table lists them. */
export const mcpRoutes = [mcpServer, mcpResourceMetadata, apiResourceMetadata] as const satisfies readonly Route[];
