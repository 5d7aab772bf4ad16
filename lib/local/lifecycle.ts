import { describeError, log } from '../log.js';

/**
 * Cleanup for the local stack (container processes, temp dirs). Whatever starts something
 * that must not outlive the process registers here; `npm start` and the test stack run it
 * on the way out.
 */
type ShutdownStep = { name: string; run: () => unknown };

const steps: ShutdownStep[] = [];
const timedOut = Symbol('timed out');
let stopping = false;

/**
 * True while the registered steps run: what stops now (a container's task) stops because the
 * stack does, not because anyone asked, so nobody records it as asked (lib/wiring/local-containers.ts).
 */
export const stackIsStopping = (): boolean => stopping;

/** Registers a cleanup step; the returned function removes it again. */
export function onShutdown(name: string, run: () => unknown): () => void {
  const step = { name, run };
  steps.push(step);
  return () => {
    const index = steps.indexOf(step);
    if (index !== -1) steps.splice(index, 1);
  };
}

/**
 * Runs every registered step, newest first, each bounded by `stepTimeoutMs`. Failures and
 * timeouts are logged and never stop the remaining steps. The registry is empty afterwards.
 */
export async function runShutdown({ stepTimeoutMs = 10_000 }: { stepTimeoutMs?: number } = {}): Promise<void> {
  const pending = steps.splice(0).reverse();
  stopping = true;
  try {
    await runSteps(pending, stepTimeoutMs);
  } finally {
    stopping = false;
  }
}

async function runSteps(pending: ShutdownStep[], stepTimeoutMs: number): Promise<void> {
  for (const step of pending) {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<typeof timedOut>((resolve) => {
      timer = setTimeout(() => resolve(timedOut), stepTimeoutMs);
    });
    try {
      const outcome = await Promise.race([Promise.resolve().then(step.run), deadline]);
      if (outcome === timedOut) log.warn('Shutdown step timed out', { step: step.name, timeoutMs: stepTimeoutMs });
    } catch (error) {
      log.error('Shutdown step failed', { step: step.name, ...describeError(error) });
    } finally {
      clearTimeout(timer);
    }
  }
}
