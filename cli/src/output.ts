/**
 * Where the CLI writes: data on stdout, everything for the person (progress, hints, errors) on
 * stderr, so `container-hosting … --json | jq` reads data only.
 */

export const out = (line = '') => process.stdout.write(`${line}\n`);
export const say = (line = '') => process.stderr.write(`${line}\n`);
export const printJson = (data: unknown) => out(JSON.stringify(data, null, 2));

/**
 * A reader that stops early (`container-hosting ls | head -1`) closes the pipe, and the next
 * write fails with EPIPE; Node ignores SIGPIPE, so without this the CLI dies with a stack trace.
 * Like a program killed by SIGPIPE, it stops writing; unlike one, it exits 0: the reader had
 * what it wanted.
 */
export function endQuietlyOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(0);
      throw error;
    });
  }
}
