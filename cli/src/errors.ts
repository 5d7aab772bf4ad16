import type { FieldProblem } from '../../lib/http/api-types.js';

/**
 * The CLI's exit codes, one table that `--help` and the README print: a script branches on them
 * rather than on the words of a message.
 */
export const EXIT = {
  /** The command did what it was asked; a container it waited for is running (or stopped, when asked to stop). */
  ok: 0,
  /** The API refused or failed, or could not be reached. */
  error: 1,
  /** The command line was wrong, or it needs a confirmation it cannot ask for (`rm` without a terminal or --yes). */
  usage: 2,
  /** The container it waited for ended `failed`, or its image could not be pulled: `state_reason` says why. */
  containerFailed: 3,
} as const;

/** The table as `--help` prints it. */
export const EXIT_CODES_TEXT = `Exit codes: ${EXIT.ok} success, ${EXIT.error} API or network error, ${EXIT.usage} usage (or a confirmation needed), ${EXIT.containerFailed} the container failed (its state_reason says why).`;

/** A failure the CLI reports in one line: its message, the API's code when there is one, and an exit code (EXIT). */
export class CliError extends Error {
  readonly code: string | undefined;
  readonly exitCode: number;
  constructor(message: string, { code, exitCode = EXIT.error }: { code?: string; exitCode?: number } = {}) {
    super(message);
    this.code = code;
    this.exitCode = exitCode;
  }
}

/** The code a failure without one of the API's own is reported under in `--json`. */
const CODE_BY_EXIT: Record<number, string> = { [EXIT.error]: 'ERROR', [EXIT.usage]: 'USAGE', [EXIT.containerFailed]: 'CONTAINER_FAILED' };

/**
 * A failure in the API's error envelope (docs/api.md, "API conventions"), so a script reads the CLI's
 * errors and the API's alike: `{ "error": { "code", "message", "details"? } }`.
 */
export function errorEnvelope(
  message: string,
  { code, exitCode = EXIT.error, details = [] }: { code?: string; exitCode?: number; details?: readonly FieldProblem[] } = {},
): { error: { code: string; message: string; details?: FieldProblem[] } } {
  return {
    error: { code: code ?? CODE_BY_EXIT[exitCode] ?? 'ERROR', message, ...(details.length ? { details: [...details] } : {}) },
  };
}
