import { runShutdown } from '../../lib/local/lifecycle.js';
import { startLocalServer } from '../../lib/local/server.js';

export interface TestStack {
  baseUrl: string;
  close(): Promise<void>;
}

/**
 * The local server in-process on a random port, against this test file's table and
 * container directory (set by setup-env). close() also runs the shutdown registry, which
 * stops any containers the tests started.
 */
export async function startTestStack(): Promise<TestStack> {
  const server = await startLocalServer({ host: '127.0.0.1', port: 0 });
  return {
    baseUrl: server.url,
    close: async () => {
      await server.close();
      await runShutdown();
    },
  };
}
