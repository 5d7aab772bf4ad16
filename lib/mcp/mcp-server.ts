import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  type CallToolResult,
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { ForbiddenError } from '../errors.js';
import type { ApiRequest } from '../http/api-request.js';
import { envelopeOf, publicFailure } from '../http/middleware/error-envelope.js';
import type { Reply } from '../http/reply.js';
import type { OAuthScope, Principal } from '../identity/principal.js';
import { log } from '../log.js';
import { CONTAINER_TOOLS, type ContainerTool, type ContainerToolServices } from './container-tools.js';

/** How the server introduces itself in `initialize` (MCP "Lifecycle"). */
const SERVER_INFO = { name: 'container-hosting', title: 'Container hosting', version: '1.0.0' };

const INSTRUCTIONS =
  'Manage the signed-in account’s containers on this container hosting service: list, create, change, start, stop, restart and delete them, and read their logs and metrics. A container is reachable at its record’s url once its state is running.';

const toolsByName = new Map(CONTAINER_TOOLS.map((tool) => [tool.name, tool]));

/** How tools/list describes a tool: its JSON Schema from its REST twin's declarations, and its hints. */
function describe(tool: ContainerTool): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: `${tool.description} Needs the ${tool.scope} scope.`,
    inputSchema: tool.inputSchema(),
    annotations: { title: tool.title, ...tool.hints },
  };
}

/** A result a person and a program can both read: the JSON as text, and the same object as structured content. */
function resultOf(structured: Record<string, unknown>, isError: boolean): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured, ...(isError ? { isError } : {}) };
}

/**
 * One tools/call: the tool's REST twin's answer as `{ data }`, or its failure as an MCP tool
 * error carrying the API's envelope (`{ error: { code, message, details? } }`), never a protocol
 * error: the model reads what went wrong and may correct itself (MCP "Tools", error handling).
 */
async function callTool(
  tool: ContainerTool,
  services: ContainerToolServices,
  principal: Principal,
  rawArguments: Record<string, unknown> | undefined,
  requestId: string,
): Promise<CallToolResult> {
  try {
    // The HTTP layer refused a call short of its scope already (lib/mcp/mcp-server.ts, scopesNeeded); this keeps the rule in the tool too.
    if (!principal.scopes.includes(tool.scope)) throw new ForbiddenError(`This token lacks the ${tool.scope} scope`);
    const data = await tool.run(services, principal, rawArguments);
    log.info('MCP tool call', { requestId, tool: tool.name, outcome: 'ok' });
    return resultOf({ data }, false);
  } catch (error) {
    const failure = publicFailure(error, requestId);
    log.info('MCP tool call', { requestId, tool: tool.name, outcome: failure.code });
    return resultOf(envelopeOf(failure), true);
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The scopes the JSON-RPC messages of one POST need that the caller lacks: each tools/call of a
 * known tool needs its REST twin's scope. The endpoint answers such a request 403 with
 * `error="insufficient_scope"` (MCP "Authorization", scope challenge), so a client may ask for more.
 */
export function scopesMissing(body: unknown, principal: Principal): OAuthScope[] {
  const messages = Array.isArray(body) ? body : [body];
  const needed = new Set<OAuthScope>();
  for (const message of messages) {
    if (!isRecord(message) || message.method !== 'tools/call' || !isRecord(message.params)) continue;
    const tool = typeof message.params.name === 'string' ? toolsByName.get(message.params.name) : undefined;
    if (tool && !principal.scopes.includes(tool.scope)) needed.add(tool.scope);
  }
  return [...needed];
}

/**
 * Answers one POST to /mcp (MCP Streamable HTTP, stateless): a fresh server and transport per
 * request, no session id, the answer as one JSON body (`enableJsonResponse`), so each request
 * stands alone and any function instance may serve the next. The request was authenticated by
 * the endpoint's middleware and its body parsed as JSON; the transport checks the rest (Accept,
 * Content-Type, JSON-RPC shape, the protocol version header).
 */
export async function answerMcpRequest(
  request: ApiRequest<unknown>,
  principal: Principal,
  services: ContainerToolServices,
): Promise<Reply> {
  const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: CONTAINER_TOOLS.map(describe) }));
  server.setRequestHandler(CallToolRequestSchema, ({ params }) => {
    const tool = toolsByName.get(params.name);
    // An unknown tool is a protocol error (MCP "Tools"): the client asked for something tools/list never offered.
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${params.name}`);
    return callTool(tool, services, principal, params.arguments, request.requestId);
  });
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    const response = await transport.handleRequest(
      new Request(`${request.origin}${request.basePath}${request.path}`, { method: request.method, headers: request.headers }),
      { parsedBody: request.body },
    );
    return { statusCode: response.status, headers: Object.fromEntries(response.headers), body: await response.text() };
  } finally {
    await server.close();
  }
}
