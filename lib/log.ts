import { Logger } from '@aws-lambda-powertools/logger';
import type { LogLevel } from '@aws-lambda-powertools/logger/types';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Context } from 'aws-lambda';

/**
 * Structured JSON logs, one line per event, written by Powertools for AWS Lambda's Logger:
 * `level`, `message`, `timestamp`, `service` (POWERTOOLS_SERVICE_NAME), the X-Ray trace id, and
 * inside an invocation `cold_start`, `function_name`, `function_request_id` (Lambda's request id)
 * and `api_request_id` (API Gateway's). The level comes from LOG_LEVEL (DEBUG, INFO, WARN, ERROR,
 * SILENT), read when this module loads. Callers pass only identifiers and outcomes: never a
 * request body, a header or a credential.
 */
type Fields = Record<string, unknown>;

/**
 * Powertools reads POWERTOOLS_LOG_LEVEL and LOG_LEVEL from the environment only in capitals and
 * silently logs at INFO for `warn`; given to the constructor, the level is read in any case.
 * Lambda's own log level (AWS_LAMBDA_LOG_LEVEL) still takes precedence inside Powertools.
 */
const levelFromEnvironment = (process.env.POWERTOOLS_LOG_LEVEL || process.env.LOG_LEVEL)?.toUpperCase();

const logger = new Logger({
  serviceName: process.env.POWERTOOLS_SERVICE_NAME || 'container-hosting',
  ...(levelFromEnvironment ? { logLevel: levelFromEnvironment as LogLevel } : {}),
});

/**
 * The ids of the invocation being served. Kept per async call chain rather than on the Logger,
 * so that the local server, which runs many invocations at once in one process, labels each
 * line with its own request's ids.
 */
const invocationFields = new AsyncLocalStorage<Fields>();

export type LogLevelName = 'debug' | 'info' | 'warn' | 'error';

/** Powertools' thresholds (its LogLevelThreshold): a line is written when its level's is at least the Logger's. */
const THRESHOLD: Record<LogLevelName, number> = { debug: 8, info: 12, warn: 16, error: 20 };

/** Writes a line in place of Powertools' JSON: the local stack's readable mode (lib/local/readable-log.ts). */
export type LineWriter = (level: LogLevelName, message: string, fields: Fields) => void;
let lineWriter: LineWriter | undefined;

/** Sends every line, at the Logger's level, to `writer` instead of Powertools' JSON; only the local stack does. */
export function writeLinesWith(writer: LineWriter): void {
  lineWriter = writer;
}

function write(level: LogLevelName, message: string, fields: Fields): void {
  const invocation = invocationFields.getStore();
  const all = invocation ? { ...fields, ...invocation } : fields;
  if (!lineWriter) logger[level](message, all);
  else if (THRESHOLD[level] >= logger.level) lineWriter(level, message, all);
}

export const log = {
  debug: (message: string, fields: Fields = {}) => write('debug', message, fields),
  info: (message: string, fields: Fields = {}) => write('info', message, fields),
  warn: (message: string, fields: Fields = {}) => write('warn', message, fields),
  error: (message: string, fields: Fields = {}) => write('error', message, fields),
};

/** The ids every line of one invocation carries. */
export interface InvocationIds {
  /** Lambda's request id (`context.awsRequestId`). */
  lambdaRequestId: string;
  /** API Gateway's request id (`requestContext.requestId`); absent for events that are not API requests. */
  apiRequestId?: string;
}

/**
 * Runs one invocation with its ids on every line it logs, and Lambda's context (function name,
 * cold start) on the Logger.
 */
export function withInvocationLog<T>(context: Context, ids: InvocationIds, run: () => T): T {
  logger.addContext(context);
  const fields: Fields = { function_request_id: ids.lambdaRequestId };
  if (ids.apiRequestId) fields.api_request_id = ids.apiRequestId;
  return invocationFields.run(fields, run);
}

/** The parts of an unexpected error that are safe to log: its kind and where it came from. */
export function describeError(error: unknown): Fields {
  if (error instanceof Error) {
    return { errorName: error.name, errorMessage: error.message, stack: error.stack };
  }
  return { errorName: typeof error };
}
