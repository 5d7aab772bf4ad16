import { describe, expect, it } from 'vitest';
import { cliOn } from '../support/cli-process.js';
import { useSignedInStack } from '../support/local-stack.js';
import { pollUntil } from '../support/poll.js';

/**
 * `container-hosting` in scripts and pipes (issue 37, item 3), spawned against the local stack on
 * the process runtime with a personal access token: exit codes that follow the outcome, a closed
 * pipe, errors under --json, rm's confirmation, bounded `logs -f`, and when a change applies.
 */

const stack = useSignedInStack();
const cli = cliOn(stack);

let counter = 0;
const uniqueHostname = (prefix: string) => `${prefix}-${process.pid}-${(counter += 1)}`;

/** A container command that answers on its PORT (a container runs once its port answers), after writing `script`'s output. */
const serving = (script = '') =>
  `${script}; require('node:http').createServer((request, response) => response.end('ok')).listen(Number(process.env.PORT));`;

/** Creates a running container through the API, not the CLI under test. */
async function runningContainer(prefix: string, script = ''): Promise<{ id: string; hostname: string }> {
  const hostname = uniqueHostname(prefix);
  const created = await stack.api('POST', '/api/v1/containers', {
    hostname,
    port: 3000,
    command: [process.execPath, '-e', serving(script)],
  });
  expect(created.status).toBe(200);
  const running = await pollUntil(
    () => stack.api('GET', `/api/v1/containers/${created.body.data.id}`),
    (response) => response.body.data.state === 'running',
    20_000,
  );
  expect(running.body.data.state).toBe('running');
  return { id: created.body.data.id, hostname };
}

describe('container-hosting in scripts', () => {
  it('create exits 3 when the container ends failed, with the record on stdout and the reason on stderr', async () => {
    const hostname = uniqueHostname('crash');

    const createCrashing = (name: string, ...flags: string[]) =>
      cli.run(['create', name, ...flags, '--port', '3000', '--restart-policy', 'never', '--', process.execPath, '-e', 'process.exit(3)']);
    const human = await createCrashing(hostname);
    const json = await createCrashing(`${hostname}-j`, '--json');

    expect(human.code).toBe(3);
    expect(human.stdout).toMatch(/^state\s+failed \(exited with code 3\)$/m);
    expect(human.stderr).toBe(`error: ${hostname} failed to start: exited with code 3 (CONTAINER_FAILED)\n`);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout)).toMatchObject({ hostname: `${hostname}-j`, state: 'failed', state_reason: 'exited with code 3' });
    expect(JSON.parse(json.stderr)).toEqual({
      error: { code: 'CONTAINER_FAILED', message: `${hostname}-j failed to start: exited with code 3` },
    });
  });

  it('get, ls and logs through a real `| head -1` print one line and exit 0, with nothing on stderr', async () => {
    // Enough lines that the CLI is still writing when head has closed the pipe.
    const { hostname } = await runningContainer('piped', "for (let i = 0; i < 500; i++) console.log('line ' + i)");
    await pollUntil(
      () => cli.run(['logs', hostname, '--limit', '1000']),
      (result) => result.stdout.includes('line 499'),
      10_000,
    );

    const piped = await Promise.all(
      [`get ${hostname}`, 'ls', `logs ${hostname} --limit 1000`].map((command) =>
        cli.shell(`$CLI ${command} | head -1; echo "exit \${PIPESTATUS[0]}" >&2`),
      ),
    );

    expect(piped.map(({ stderr }) => stderr)).toEqual(['exit 0\n', 'exit 0\n', 'exit 0\n']);
    expect(piped.map(({ stdout }) => stdout.split('\n').length)).toEqual([2, 2, 2]);
    expect(piped[0]!.stdout).toMatch(/^id\s+/);
    expect(piped[1]!.stdout).toMatch(/^HOSTNAME\s+STATE/);
    expect(piped[2]!.stdout).toMatch(/ out line 0\n$/);
  });

  it('under --json, errors are the envelope on stderr: the API’s code and details, USAGE with exit 2', async () => {
    const missing = await cli.run(['get', 'no-such-container', '--json']);
    const refused = await cli.run(['create', uniqueHostname('small'), '--memory', '3', '--no-wait', '--json']);
    const usage = await cli.run(['create', '--json']);

    expect(missing).toMatchObject({ code: 1, stdout: '' });
    expect(JSON.parse(missing.stderr)).toEqual({ error: { code: 'NOT_FOUND', message: 'No container named no-such-container' } });
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(JSON.parse(refused.stderr)).toMatchObject({
      error: { code: 'BAD_REQUEST', details: [{ field: 'memory_mb', message: 'must be at least 512' }] },
    });
    expect(usage).toMatchObject({ code: 2, stdout: '' });
    expect(JSON.parse(usage.stderr)).toEqual({ error: { code: 'USAGE', message: "missing required argument 'hostname'" } });
  });

  it('rm without a terminal and without --yes refuses with exit 2 and keeps the container; on a terminal it asks', async () => {
    const { id, hostname } = await runningContainer('kept');

    const refused = await cli.run(['rm', hostname]);
    const declined = await cli.shell(`(sleep 1; printf 'n\\n') | script -qec "$CLI rm ${hostname}" /dev/null`);
    const kept = await stack.api('GET', `/api/v1/containers/${id}`);
    const confirmed = await cli.shell(`(sleep 1; printf 'y\\n') | script -qec "$CLI rm ${hostname}" /dev/null`);
    const gone = await stack.api('GET', `/api/v1/containers/${id}`);

    expect(refused).toMatchObject({
      code: 2,
      stdout: '',
      stderr: `error: rm deletes ${hostname} for good; with no terminal to ask, pass --yes to confirm\n`,
    });
    // script(1) runs the CLI on a pseudo-terminal and answers with its exit code; both streams reach its stdout.
    expect(declined.code).toBe(2);
    expect(declined.stdout).toContain(`Delete ${hostname}, its logs and its URL for good? [y/N]`);
    expect(declined.stdout).toContain(`Kept ${hostname}`);
    expect(kept.status).toBe(200);
    expect(confirmed.code).toBe(0);
    expect(confirmed.stdout).toContain(`Deleted ${hostname}`);
    expect(gone.status).toBe(404);
  });

  it('logs -f --limit 3 prints the newest 3 lines of a burst, in order, and nothing more while nothing new is written', async () => {
    // One write of 20 lines: the runtime stamps them within a millisecond or two, as a burst of output is.
    const { hostname, id } = await runningContainer(
      'burst',
      "process.stdout.write(Array.from({ length: 20 }, (_, i) => 'line ' + i + '\\n').join(''))",
    );
    await pollUntil(
      () => cli.run(['logs', hostname, '--limit', '1000']),
      (result) => result.stdout.includes('line 19'),
      10_000,
    );
    const { body } = await stack.api('GET', `/api/v1/containers/${id}`);

    const followed = await Promise.all(
      [
        ['--limit', '3'],
        ['--limit', '3', '--since', body.data.created_at],
      ].map(async (flags) => {
        const follow = cli.start(['logs', hostname, '-f', ...flags]);
        await pollUntil(
          async () => follow.output.stdout,
          (stdout) => stdout.includes('line 19'),
          15_000,
        );
        // Two polls of following (one every 2 s), with nothing new written meanwhile.
        await new Promise((resolve) => setTimeout(resolve, 5_000));
        follow.child.kill('SIGINT');
        return follow.done;
      }),
    );

    for (const result of followed) {
      expect(result.code).toBe(0);
      expect(
        result.stdout
          .trim()
          .split('\n')
          .map((line) => line.replace(/^\S+ out /, '')),
      ).toEqual(['line 17', 'line 18', 'line 19']);
    }
  });

  it('update and env set say when the change applies: at the next start, but idle_timeout_s at once', async () => {
    const { hostname } = await runningContainer('hinted');

    const envSet = await cli.run(['env', 'set', hostname, 'GREETING=hi']);
    const memory = await cli.run(['update', hostname, '--memory', '1024']);
    const idle = await cli.run(['update', hostname, '--idle-timeout', '600']);
    const json = await cli.run(['update', hostname, '--memory', '512', '--json']);

    expect(envSet.stderr).toBe(`The change of env applies at the next start; to apply it now: container-hosting restart ${hostname}\n`);
    expect(memory.stderr).toBe(
      `The change of memory_mb applies at the next start; to apply it now: container-hosting restart ${hostname}\n`,
    );
    expect(idle.stderr).toBe('The change of idle_timeout_s applies at once.\n');
    // Scripts read data only: no hint under --json.
    expect(json.stderr).toBe('');
  });

  it('./container-hosting, the launcher a checkout runs without npx, starts the CLI with its arguments', async () => {
    const launched = await cli.shell('./container-hosting whoami --json');

    expect(launched.code).toBe(0);
    expect(JSON.parse(launched.stdout)).toMatchObject({ role: 'user' });
  });

  it('--help lists the exit codes', async () => {
    const help = await cli.run(['--help']);

    expect(help.code).toBe(0);
    expect(help.stdout).toContain(
      'Exit codes: 0 success, 1 API or network error, 2 usage (or a confirmation needed), 3 the container failed (its state_reason says why).',
    );
  });
});
