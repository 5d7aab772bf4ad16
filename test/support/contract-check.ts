import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

/**
 * Every answer the e2e suite gets through `call()` (test/support/api-client.ts) is checked against
 * docs/openapi.json, the document a client is generated from: a success must be one of the
 * operation's documented statuses and match its schema, with no field the schema does not name
 * (the document itself leaves records open, lib/http/openapi.ts); an error must be the envelope.
 * The committed document is read, and test/unit/http/openapi.test.ts keeps it current.
 */

type Json = Record<string, any>;

const document: Json = JSON.parse(readFileSync(join(import.meta.dirname, '../../docs/openapi.json'), 'utf8'));

/** A record answered with a field its schema does not name fails the check. */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: Json = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, closed(value)]));
  if (copy.type === 'object' && copy.properties && copy.additionalProperties === undefined) copy.additionalProperties = false;
  if (typeof copy.$ref === 'string') copy.$ref = `openapi.json${copy.$ref}`;
  return copy;
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addFormat('date-time', {
  type: 'string',
  validate: (value: string) => /^\d{4}-\d\d-\d\dT/.test(value) && !Number.isNaN(Date.parse(value)),
});
ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
ajv.addFormat('email', /^[^@\s]+@[^@\s]+$/);
ajv.addSchema({ $id: 'openapi.json', components: closed(document.components) });

interface Operation {
  id: string;
  pattern: RegExp;
  method: string;
  responses: Json;
}

const operations: Operation[] = Object.entries(document.paths as Json).flatMap(([path, methods]) =>
  Object.entries(methods as Json).map(([method, operation]) => ({
    id: operation.operationId,
    method: method.toUpperCase(),
    // A parameter is one segment, except the console's greedy `{path}`.
    pattern: new RegExp(`^${path.replace(/\{path\}/, '.+').replace(/\{\w+\}/g, '[^/]+')}$`),
    responses: operation.responses,
  })),
);

const validators = new Map<string, ValidateFunction>();

function validatorFor(key: string, schema: Json): ValidateFunction {
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile(closed(schema) as Json);
    validators.set(key, validate);
  }
  return validate;
}

function responseOf(operation: Operation, status: number): Json | undefined {
  const response = operation.responses[String(status)];
  if (!response?.$ref) return response;
  return document.components.responses[String(response.$ref).split('/').pop()!];
}

/** The operation a request reached; static paths before templated ones (`/users/me` is not `/users/{user_id}`). */
function operationOf(method: string, path: string): Operation | undefined {
  const matching = operations.filter((operation) => operation.method === method && operation.pattern.test(path));
  return matching.sort((a, b) => a.pattern.source.split('[^/]+').length - b.pattern.source.split('[^/]+').length)[0];
}

/**
 * What is wrong with this answer by the document, or undefined when nothing is. Requests the
 * document does not describe (a container's own URL, an unknown path, a method it does not
 * serve) are not checked here.
 */
export function contractProblem(
  method: string,
  url: string,
  status: number,
  contentType: string | null,
  body: unknown,
): string | undefined {
  const path = new URL(url).pathname;
  const operation = operationOf(method, path);
  if (!operation || status === 405) return undefined;
  const response = responseOf(operation, status);
  if (!response) {
    // An error the operation does not list is reported by the status table test; a success must be listed.
    return status < 400 ? `${operation.id} answered ${status}, which the document does not list` : undefined;
  }
  const schema = response.content?.['application/json']?.schema;
  if (!schema || !contentType?.includes('application/json')) return undefined;
  const validate = validatorFor(`${operation.id} ${status}`, schema);
  if (validate(body)) return undefined;
  const errors = (validate.errors ?? [])
    .slice(0, 5)
    .map(
      (error) =>
        `${error.instancePath || '/'} ${error.message}${error.params && 'additionalProperty' in error.params ? ` (${error.params.additionalProperty})` : ''}`,
    );
  return `${operation.id} answered ${status} with a body the document does not describe: ${errors.join('; ')}`;
}
