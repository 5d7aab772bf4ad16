/**
 * Structured JSON logs, one line per event. Callers pass only identifiers and outcomes:
 * never a request body, a header or a credential.
 */
type Fields = Record<string, unknown>;

function write(level: 'info' | 'warn' | 'error', message: string, fields: Fields): void {
  // Read here, not through lib/config: the local launcher logs before it has set the
  // environment that configuration is parsed from.
  if (process.env.LOG_LEVEL === 'silent') return;
  const line = JSON.stringify({ level, message, time: new Date().toISOString(), ...fields });
  if (level === 'error') console.error(line);
  else console.log(line);
}

export const log = {
  info: (message: string, fields: Fields = {}) => write('info', message, fields),
  warn: (message: string, fields: Fields = {}) => write('warn', message, fields),
  error: (message: string, fields: Fields = {}) => write('error', message, fields),
};

/** The parts of an unexpected error that are safe to log: its kind and where it came from. */
export function describeError(error: unknown): Fields {
  if (error instanceof Error) {
    return { errorName: error.name, errorMessage: error.message, stack: error.stack };
  }
  return { errorName: typeof error };
}
