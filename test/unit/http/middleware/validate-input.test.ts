import { describe, expect, it } from 'vitest';
import { createContainerBody } from '../../../../lib/containers/schemas.js';
import { updateContainerBody } from '../../../../lib/containers/schemas.js';
import { BadRequestError } from '../../../../lib/errors.js';
import { parseInput } from '../../../../lib/http/middleware/validate-input.js';
import { pageQuerySchema } from '../../../../lib/http/pagination.js';
import { createTokenBody } from '../../../../lib/identity/schemas.js';

const messageFor = (parse: () => unknown): string => {
  try {
    parse();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected a 400');
};

describe('request validation messages', () => {
  // lib/zod.ts loads zod's English messages into zod/mini, which has none of its own ("Invalid input").
  it.each([
    [
      createTokenBody,
      { name: 'ci', expires_in_days: 400 },
      'Invalid request body: expires_in_days: must be a whole number of days from 1 to 365',
    ],
    [createTokenBody, { name: '  ' }, 'Invalid request body: name: must not be empty'],
    [createTokenBody, { name: 'ci', extra: true }, 'Invalid request body: Unrecognized key: "extra"'],
    [
      createTokenBody,
      { name: 'ci', scopes: [] },
      'Invalid request body: scopes: must name at least one of containers:read, containers:write, account',
    ],
    [
      createTokenBody,
      { name: 'ci', scopes: ['admin'] },
      'Invalid request body: scopes.0: must be one of containers:read, containers:write, account',
    ],
    [createTokenBody, { name: 7 }, 'Invalid request body: name: must be a string'],
    [createContainerBody, { hostname: 'web', cpu_cores: 3 }, 'Invalid request body: cpu_cores: must be one of 1, 2, 4, 8 or 16'],
    [
      createContainerBody,
      { hostname: 'web', cpu_cores: 1, memory_mb: 9000 },
      'Invalid request body: memory_mb: must be at most 8192 for 1 CPU core',
    ],
  ])('names the field and the rule in English: %#', (schema, body, message) => {
    expect(messageFor(() => parseInput(schema, body, 'request body'))).toBe(message);
  });

  it('reads limit as a whole number from 1 to 1000, defaulting to 100', () => {
    expect(parseInput(pageQuerySchema, {}, 'query parameters')).toEqual({ limit: 100 });
    expect(parseInput(pageQuerySchema, { limit: '25' }, 'query parameters')).toEqual({ limit: 25 });
    expect(messageFor(() => parseInput(pageQuerySchema, { limit: '0' }, 'query parameters'))).toBe(
      'Invalid query parameters: limit: must be at least 1',
    );
    expect(messageFor(() => parseInput(pageQuerySchema, { limit: '2.5' }, 'query parameters'))).toBe(
      'Invalid query parameters: limit: must be a whole number from 1 to 1000',
    );
  });
});

const problemsFor = (parse: () => unknown) => {
  try {
    parse();
  } catch (error) {
    if (error instanceof BadRequestError) return error.details;
  }
  throw new Error('expected a 400');
};

describe('request validation details', () => {
  it.each([
    ['a top-level field', { hostname: 'web', memory_mb: 3 }, [{ field: 'memory_mb', message: expect.any(String) }]],
    [
      'a rule across fields, on the field it names',
      { hostname: 'web', memory_mb: 9000 },
      [{ field: 'memory_mb', message: 'must be at most 8192 for 1 CPU core' }],
    ],
    [
      'a nested field, dotted',
      { hostname: 'web', health_check: { path: 'no-slash' } },
      [{ field: 'health_check.path', message: expect.any(String) }],
    ],
    [
      'an env variable by its name',
      { hostname: 'web', env: { PORT: '1' } },
      [{ field: 'env.PORT', message: expect.stringContaining('reserved') }],
    ],
    ['an unknown field by its name', { hostname: 'web', entrypoint: ['sh'] }, [{ field: 'entrypoint', message: 'is not a known field' }]],
    [
      'every field that is wrong',
      { hostname: 'Web', cpu_cores: 3 },
      [
        { field: 'hostname', message: expect.any(String) },
        { field: 'cpu_cores', message: 'must be one of 1, 2, 4, 8 or 16' },
      ],
    ],
  ])('names %s', (_what, body, details) => {
    expect(problemsFor(() => parseInput(createContainerBody, body, 'request body'))).toEqual(details);
  });

  it('names no field for a problem with the whole body, which the message states', () => {
    expect(problemsFor(() => parseInput(updateContainerBody, {}, 'request body'))).toEqual([]);
  });
});
