import type * as z from '../../zod.js';
import { BadRequestError, type FieldProblem, NotFoundError } from '../../errors.js';
import { pathIdOf } from '../path-parameters.js';
import type { EndpointMiddleware } from './types.js';

export interface InputSchemas {
  body?: z.ZodMiniType;
  query?: z.ZodMiniType;
}

/** Problems past this many are left out: a client has enough to fix, and the answer stays small. */
const MAX_PROBLEMS = 5;

/**
 * Each issue as the field it names (its path, dotted) and what is wrong, never the offending
 * value. An issue about the whole object (a missing body, an empty PATCH) names no field and is
 * left to the message. zod reports an unknown key on the object, with the keys in `keys`: each
 * becomes a problem of its own field.
 */
export function fieldProblemsOf(error: z.core.$ZodError): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const issue of error.issues) {
    const path = issue.path.map(String);
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) problems.push({ field: [...path, key].join('.'), message: 'is not a known field' });
    } else if (path.length > 0) {
      problems.push({ field: path.join('.'), message: issue.message });
    }
  }
  return problems.slice(0, MAX_PROBLEMS);
}

/** A short, client-facing summary of what failed validation, never the offending values. */
export function describeIssues(error: z.core.$ZodError): string {
  return error.issues
    .slice(0, MAX_PROBLEMS)
    .map((issue) => (issue.path.length ? `${issue.path.join('.')}: ${issue.message}` : issue.message))
    .join('; ');
}

export function parseInput<Schema extends z.ZodMiniType>(schema: Schema, value: unknown, what: string): z.infer<Schema> {
  const result = schema.safeParse(value);
  if (!result.success) throw new BadRequestError(`Invalid ${what}: ${describeIssues(result.error)}`, fieldProblemsOf(result.error));
  return result.data;
}

/**
 * Body and query first (400), then path ids (404): a path id that is not a UUID names no
 * resource, so it is answered like a missing one (docs/api-rules.md).
 */
export function validateInput(schemas: InputSchemas): EndpointMiddleware {
  return {
    name: 'validateInput',
    before: async (request) => {
      const api = request.context.api;
      if (schemas.body) {
        if (api.body === null || typeof api.body !== 'object' || Array.isArray(api.body)) {
          throw new BadRequestError('The request body must be a JSON object');
        }
        api.body = parseInput(schemas.body, api.body, 'request body');
      }
      if (schemas.query) api.query = parseInput(schemas.query, api.query, 'query parameters') as Record<string, string>;
      for (const [name, value] of Object.entries(api.params)) {
        if (!name.endsWith('_id')) continue;
        const id = pathIdOf(name, value);
        if (id === undefined) throw new NotFoundError();
        api.params[name] = id;
      }
    },
  };
}
