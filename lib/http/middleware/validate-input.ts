import type * as z from '../../zod.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import { isUuid } from '../../ids.js';
import type { EndpointMiddleware } from './types.js';

export interface InputSchemas {
  body?: z.ZodMiniType;
  query?: z.ZodMiniType;
}

/** A short, client-facing summary of what failed validation, never the offending values. */
export function describeIssues(error: z.core.$ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => (issue.path.length ? `${issue.path.join('.')}: ${issue.message}` : issue.message))
    .join('; ');
}

export function parseInput<Schema extends z.ZodMiniType>(schema: Schema, value: unknown, what: string): z.infer<Schema> {
  const result = schema.safeParse(value);
  if (!result.success) throw new BadRequestError(`Invalid ${what}: ${describeIssues(result.error)}`);
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
        if (name.endsWith('_id') && !isUuid(value)) throw new NotFoundError();
      }
    },
  };
}
