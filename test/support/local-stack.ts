import { createServer, type AddressInfo } from 'node:net';
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
  // Containers' url names the stack's port, and lib/config reads it when the first handler loads.
  const port = await freePort();
  process.env.APPS_DOMAIN = `localhost:${port}`;
  process.env.APPS_URL_SCHEME = 'http';
  // The stack's own address, as scripts/local.ts sets it: the issuer and every absolute URL.
  process.env.PUBLIC_BASE_URL = `http://127.0.0.1:${port}`;
  // Loaded after the configuration it reads at module load is set.
  const { localContainerHosting } = await import('../../lib/wiring/local-hosting.js');
  const server = await startLocalServer({ host: '127.0.0.1', port, containers: localContainerHosting });
  return {
    baseUrl: server.url,
    close: async () => {
      await server.close();
      await runShutdown();
    },
  };
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => probe.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
