import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import { engineClient, engineInfo } from '../../lib/local/docker-engine.js';

declare module 'vitest' {
  export interface ProvidedContext {
    dockerHost: string;
  }
}

/** The image the engine tests run: Debian's static busybox, nothing else, never pulled (no registry is reachable). */
export const TEST_IMAGE = 'localhost/container-hosting-test/web:1';

/**
 * A shell as PID 1 ignores SIGTERM unless it traps it, so the trap makes stop quick; the
 * server serves /www, whose index.html says where it came from.
 */
const CONTAINERFILE = `FROM scratch
COPY busybox /bin/busybox
RUN ["/bin/busybox", "sh", "-c", "/bin/busybox --install -s /bin && mkdir -p /www /tmp && chmod 1777 /tmp && echo 'served from the image' > /www/index.html"]
ENV PATH=/bin
USER 65534:65534
CMD ["/bin/sh", "-c", "trap 'exit 0' TERM; echo started; httpd -f -p \${PORT:-8080} -h /www & wait"]
`;

const execFileAsync = promisify(execFile);
const podmanScript = new URL('../../scripts/podman-service.sh', import.meta.url).pathname;

/**
 * For the engine tests (test/engine): the engine at DOCKER_HOST when it answers, else Podman's
 * API service started by scripts/podman-service.sh (and stopped again at the end); then the
 * test image, built once through the engine's API from /bin/busybox.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let dockerHost = process.env.DOCKER_HOST;
  let startedPid: number | undefined;
  // A busy machine can take seconds to answer; a slow engine is not a missing one (the script would start a second).
  if (!dockerHost || !(await engineInfo(engineClient(dockerHost), 20_000))) {
    // A socket of this run's own: a service another run (another checkout's suite, the local stack)
    // started is stopped by that run's teardown, and the engine files still running here would lose it.
    const { stdout } = await execFileAsync(podmanScript, [join(tmpdir(), `container-hosting-podman-test-${process.pid}.sock`)], {
      timeout: 60_000,
    });
    dockerHost = /^DOCKER_HOST=(.+)$/m.exec(stdout)?.[1];
    const pid = /^PODMAN_PID=(\d+)$/m.exec(stdout)?.[1];
    startedPid = pid ? Number(pid) : undefined;
    if (!dockerHost) throw new Error(`scripts/podman-service.sh named no DOCKER_HOST: ${stdout}`);
  }
  const engine = engineClient(dockerHost);
  if (
    !(await engine
      .getImage(TEST_IMAGE)
      .inspect()
      .then(
        () => true,
        () => false,
      ))
  )
    await buildTestImage(engine);
  await removeLeftoverNetworks(engine);
  project.provide('dockerHost', dockerHost);

  return async () => {
    if (startedPid !== undefined) {
      try {
        process.kill(startedPid, 'SIGTERM');
      } catch {
        // Already gone.
      }
    }
  };
}

/**
 * Networks of this service's stacks that no engine container uses: a test run killed before its
 * files' teardown (test/support/setup-engine-env.ts) leaves its stack's behind, and on Podman 4.3
 * every network call costs about 55 ms per network there is (docs/runtimes.md, "Networks"): 28
 * leftovers made a container that exits at once `failed` after 8 s instead of 3. One listing of
 * every container says which networks are in use.
 */
async function removeLeftoverNetworks(engine: ReturnType<typeof engineClient>): Promise<void> {
  const [networks, containers] = await Promise.all([
    engine.listNetworks({ filters: { label: ['container-hosting.stack'] } }),
    engine.listContainers({ all: true }),
  ]);
  const used = new Set(containers.flatMap((info) => Object.keys(info.NetworkSettings?.Networks ?? {})));
  for (const network of networks) {
    if (!used.has(network.Name))
      await engine
        .getNetwork(network.Id)
        .remove()
        .catch(() => undefined);
  }
}

async function buildTestImage(engine: ReturnType<typeof engineClient>): Promise<void> {
  const context = await mkdtemp(join(tmpdir(), 'engine-image-'));
  try {
    await copyFile('/bin/busybox', join(context, 'busybox'));
    await writeFile(join(context, 'Containerfile'), CONTAINERFILE);
    const progress = await engine.buildImage(
      { context, src: ['Containerfile', 'busybox'] },
      { t: TEST_IMAGE, dockerfile: 'Containerfile' },
    );
    await new Promise<void>((resolve, reject) =>
      engine.modem.followProgress(progress, (error: Error | null, events: Array<{ error?: string }>) => {
        const failed = events?.find((event) => event.error);
        if (error || failed) reject(error ?? new Error(failed!.error));
        else resolve();
      }),
    );
  } finally {
    await rm(context, { recursive: true, force: true });
  }
}
