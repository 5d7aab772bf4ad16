import type { LocalContainerHosting } from '../local/server.js';
import { localAppRouting, serveLocalDownload, startLocalReconciler } from './local-containers.js';
import { startLocalUsageSampler } from './local-usage-history.js';

/** What the local server routes and reconciles (lib/local/server.ts), handed to it by its caller. */
export const localContainerHosting: LocalContainerHosting = {
  appRouting: localAppRouting,
  serveDownload: serveLocalDownload,
  startReconciler: () => {
    const stopReconciler = startLocalReconciler();
    const stopSampler = startLocalUsageSampler();
    return async () => {
      await Promise.all([stopReconciler(), stopSampler()]);
    };
  },
};
