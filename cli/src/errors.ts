/** A failure the CLI reports in one line: its message, the API's code when there is one, and an exit code (1 API or network, 2 usage). */
export class CliError extends Error {
  readonly code: string | undefined;
  readonly exitCode: number;
  constructor(message: string, { code, exitCode = 1 }: { code?: string; exitCode?: number } = {}) {
    super(message);
    this.code = code;
    this.exitCode = exitCode;
  }
}
