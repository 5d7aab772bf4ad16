import type { ContainerLogs } from '../../containers/logs.js';
import { NotImplementedError } from '../../errors.js';

/**
 * Lambda's lib/wiring/container-logs.ts (see infra/bundling.ts). The CloudWatch Logs reader
 * replaces this; until then the endpoint answers 501 NOT_IMPLEMENTED on AWS.
 */
export const containerLogs: ContainerLogs = {
  read: async () => {
    throw new NotImplementedError('Container logs are not available on this deployment yet');
  },
};
