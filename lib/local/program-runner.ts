import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';

/**
 * The helper's own code, run with `node -e`: it runs each program it is sent (a JSON line: id,
 * file, args, stdin) and answers a JSON line with the program's output, or its failure.
 */
const HELPER_SOURCE = `
const { execFile } = require('node:child_process');
const lines = require('node:readline').createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const { id, file, args, input } = JSON.parse(line);
  const child = execFile(file, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
    process.stdout.write(JSON.stringify({ id, stdout, stderr, ...(error ? { failure: error.message } : {}) }) + '\\n');
  });
  child.stdin.on('error', () => undefined);
  child.stdin.end(input);
});
lines.on('close', () => process.exit(0));
`;

interface Answer {
  id: number;
  stdout: string;
  stderr: string;
  failure?: string;
}

type Helper = ChildProcessByStdio<Writable, Readable, null>;

/**
 * Runs programs (the firewall's iptables) from one small helper process instead of from the
 * stack's own. Node starts a child by forking its whole process, and its event loop waits
 * meanwhile: measured on this 2-core machine under load, 65 to 280 ms of a stopped event loop per
 * `/bin/true`, and up to 950 ms for the two `iptables -S` of a firewall check, during which no
 * request was proxied, no readiness probe answered and no table answer read; the same programs
 * started from the helper held the stack's loop 20 to 50 ms (docs/measurements.md, "Wake against
 * the bare engine"). The helper starts at the first program and is kept for the next ones.
 */
export class ProgramRunner {
  private helper: Helper | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (stdout: string) => void; reject: (error: Error) => void }>();

  /** The program's stdout; a failure (exit code, signal, not found) rejects with its message and its `stderr`. */
  run(file: string, args: readonly string[], input?: string): Promise<string> {
    const helper = this.started();
    const id = this.nextId++;
    const answered = new Promise<string>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    if (this.pending.size === 1) this.hold(helper, true);
    helper.stdin.write(`${JSON.stringify({ id, file, args, input })}\n`);
    return answered;
  }

  /** Ends the helper; programs still running answer a failure. */
  close(): void {
    this.helper?.stdin.end();
    this.helper = undefined;
  }

  private started(): Helper {
    if (this.helper) return this.helper;
    const helper = spawn(process.execPath, ['-e', HELPER_SOURCE], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.helper = helper;
    let buffered = '';
    helper.stdout.setEncoding('utf8');
    helper.stdout.on('data', (chunk: string) => {
      buffered += chunk;
      for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
        const answer: Answer = JSON.parse(buffered.slice(0, end));
        this.answer(helper, answer);
        buffered = buffered.slice(end + 1);
      }
    });
    helper.stdin.on('error', () => undefined);
    helper.on('exit', () => {
      if (this.helper === helper) this.helper = undefined;
      for (const { reject } of this.pending.values()) reject(new Error('the helper that runs programs exited'));
      this.pending.clear();
    });
    // Idle, it keeps nobody alive: only while a program runs (hold).
    this.hold(helper, false);
    return helper;
  }

  private answer(helper: Helper, answer: Answer): void {
    const waiting = this.pending.get(answer.id);
    if (!waiting) return;
    this.pending.delete(answer.id);
    if (this.pending.size === 0) this.hold(helper, false);
    if (answer.failure === undefined) waiting.resolve(answer.stdout);
    else waiting.reject(Object.assign(new Error(answer.failure), { stderr: answer.stderr }));
  }

  private hold(helper: Helper, held: boolean): void {
    // The pipes are sockets, whose ref and unref their stream types do not declare.
    for (const handle of [helper, helper.stdout, helper.stdin]) {
      const method: unknown = Reflect.get(handle, held ? 'ref' : 'unref');
      if (typeof method === 'function') method.call(handle);
    }
  }
}
