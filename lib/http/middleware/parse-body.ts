import httpJsonBodyParser from '@middy/http-json-body-parser';
import { BadRequestError, invalidFields, PayloadTooLargeError } from '../../errors.js';
import type { ApiRequest } from '../api-request.js';
import type { Route } from '../routes.js';
import type { EndpointMiddleware, EndpointRequest } from './types.js';

/** docs/api-rules.md: JSON bodies up to 16 KiB. */
export const MAX_BODY_BYTES = 16 * 1024;

/**
 * How deep a JSON body's arrays and objects may nest. Our deepest request nests three (a mount in
 * a container's `mounts`); a deeper body would only exhaust the stack of whatever walks it
 * (a 5,000-deep array used to answer 500).
 */
export const MAX_JSON_DEPTH = 32;

const jsonParser = httpJsonBodyParser();

/** Whether `text`'s arrays and objects nest deeper than `maxDepth`, read in one pass without recursion; brackets inside strings do not count. */
function nestsDeeperThan(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (inString) {
      if (char === '\\') index++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '[' || char === '{') {
      depth++;
      if (depth > maxDepth) return true;
    } else if (char === ']' || char === '}') depth--;
  }
  return false;
}

/** RFC 6749 section 3.1: a parameter sent twice makes the request invalid. */
export function parseForm(body: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(body)) {
    if (Object.hasOwn(fields, name)) throw new BadRequestError(`Parameter ${name} is repeated`);
    fields[name] = value;
  }
  return fields;
}

async function parseJson(request: EndpointRequest, rawBody: string, contentType: string): Promise<unknown> {
  request.event.headers = { ...request.event.headers, 'content-type': contentType };
  request.event.body = rawBody;
  request.event.isBase64Encoded = false;
  try {
    await jsonParser.before!(request as never);
  } catch {
    throw new BadRequestError(
      contentType ? 'The request body is not valid JSON' : 'Send the body as JSON with Content-Type: application/json',
    );
  }
  return request.event.body;
}

/**
 * The path of the first `__proto__` key in a parsed JSON body, if any. JSON.parse keeps it as an
 * own key, but every later copy into a plain object (zod's output, the DynamoDB marshaller) drops
 * it or sets a prototype with it, so it is refused before anything reads the body.
 */
function prototypeKeyPath(value: unknown, path: string[] = []): string[] | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  for (const key of Object.keys(value)) {
    if (key === '__proto__') return [...path, key];
    const found = prototypeKeyPath((value as Record<string, unknown>)[key], [...path, key]);
    if (found) return found;
  }
  return undefined;
}

/**
 * Decodes the body the route accepts: JSON (through middy's JSON parser), or for OAuth's
 * endpoints also application/x-www-form-urlencoded. Routes without a body ignore one.
 */
export function parseBody(route: Route): EndpointMiddleware {
  return {
    name: 'parseBody',
    before: async (request) => {
      const api = request.context.api as ApiRequest<unknown>;
      const rawBody = typeof api.body === 'string' ? api.body : undefined;
      if (rawBody !== undefined && Buffer.byteLength(rawBody, 'utf8') > MAX_BODY_BYTES) {
        throw new PayloadTooLargeError(`Request bodies are limited to ${MAX_BODY_BYTES} bytes`);
      }
      if (route.body === 'none') {
        api.body = undefined;
        return;
      }
      const contentType = (api.headers['content-type'] ?? '').toLowerCase();
      const acceptsForm = route.body === 'form' || route.body === 'json-or-form';
      const acceptsJson = route.body === 'json' || route.body === 'optional-json' || route.body === 'json-or-form';
      if (acceptsForm && contentType.startsWith('application/x-www-form-urlencoded')) {
        api.body = parseForm(rawBody ?? '');
        return;
      }
      if (!acceptsJson) {
        throw new BadRequestError('Send the body as application/x-www-form-urlencoded');
      }
      if (rawBody === undefined || rawBody.trim() === '') {
        if (route.body === 'optional-json') {
          api.body = {};
          return;
        }
        throw new BadRequestError('A JSON request body is required');
      }
      // Before anything parses or walks the body: every walk of it below recurses.
      if (nestsDeeperThan(rawBody, MAX_JSON_DEPTH)) {
        throw new BadRequestError(`The request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`);
      }
      api.body = await parseJson(request, rawBody, contentType);
      const prototypeKey = prototypeKeyPath(api.body);
      if (prototypeKey) {
        throw invalidFields([
          { field: prototypeKey.join('.'), message: 'is reserved: names of JavaScript object properties cannot be used' },
        ]);
      }
    },
  };
}
