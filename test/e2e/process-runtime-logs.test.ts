import { link, readdir, truncate, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, personalAccessToken, signedInUser } from '../support/api-client.js';
import { useStack } from '../support/local-stack.js';
import { pollUntil } from '../support/poll.js';

/*
 * Logs on the process runtime (setup-env: CONTAINER_RUNTIME=local, every account trusted), read
 * over HTTP after a file under LOCAL_CONTAINER_DIR/.logs was swapped, as a container's process
 * (the service's own OS user) can.
 */
const stack = useStack();
let victimToken: string;
let malloryToken: string;

beforeAll(async () => {
  const [victim, mallory] = await Promise.all([signedInUser(stack.baseUrl), signedInUser(stack.baseUrl)]);
  [victimToken, malloryToken] = await Promise.all([
    personalAccessToken(stack.baseUrl, victim),
    personalAccessToken(stack.baseUrl, mallory),
  ]);
});

/** A container that prints `line` and then answers on its PORT, running; answers its id and its log file. */
async function containerPrinting(token: string, hostname: string, line: string): Promise<{ id: string; logFile: string }> {
  const program = `console.log(${JSON.stringify(line)}); require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.env.PORT));`;
  const created = await call(stack.baseUrl, 'POST', '/api/v1/containers', {
    token,
    body: { hostname, command: [process.execPath, '-e', program] },
  });
  expect(created.status).toBe(200);
  const id: string = created.body.data.id;
  expect(
    await pollUntil(
      () => logMessages(token, id),
      (messages) => messages.includes(line),
      15_000,
    ),
  ).toContain(line);
  const logDir = join(process.env.LOCAL_CONTAINER_DIR!, '.logs', id);
  const [file] = (await readdir(logDir)).filter((name) => name.endsWith('.jsonl'));
  return { id, logFile: join(logDir, file!) };
}

async function logMessages(token: string, id: string, query = ''): Promise<string[]> {
  const response = await call(stack.baseUrl, 'GET', `/api/v1/containers/${id}/logs${query}`, { token });
  expect(response.status).toBe(200);
  return response.body.data.map((line: { message: string }) => line.message);
}

describe('process-runtime logs over HTTP', () => {
  it("answers a notice, not another user's output, for a log swapped for a hard link to theirs", async () => {
    const secret = `victim-secret-${process.pid}`;
    const victim = await containerPrinting(victimToken, 'logs-victim', secret);
    const mallory = await containerPrinting(malloryToken, 'logs-mallory', 'nothing to see');

    await unlink(mallory.logFile);
    await link(victim.logFile, mallory.logFile);
    const tail = await logMessages(malloryToken, mallory.id);
    const since = await logMessages(malloryToken, mallory.id, '?since=2000-01-01T00:00:00Z');

    expect([...tail, ...since].join('\n')).not.toContain(secret);
    expect(tail).toEqual([expect.stringMatching(/^\[log not shown: the file .*\.jsonl has more than one link/)]);
    expect(since).toEqual(tail);
  });

  it('answers a 40 GiB sparse log at once, with a notice, and still reads the normal logs beside it', async () => {
    const own = await containerPrinting(malloryToken, 'logs-sparse', 'before the swap');
    const normal = await containerPrinting(malloryToken, 'logs-normal', 'an ordinary line');
    await truncate(own.logFile, 40 * 1024 ** 3);

    const started = performance.now();
    const tail = await logMessages(malloryToken, own.id);
    const since = await logMessages(malloryToken, own.id, '?since=2000-01-01T00:00:00Z');
    const elapsedMs = performance.now() - started;

    expect(tail).toEqual([expect.stringMatching(/is larger than the 10 MiB a task's log may be/)]);
    expect(since).toEqual(tail);
    expect(elapsedMs).toBeLessThan(1000);
    expect(await logMessages(malloryToken, normal.id)).toEqual(['an ordinary line']);
  });
});
