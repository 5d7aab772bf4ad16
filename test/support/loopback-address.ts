import type { TaskAddress } from '../../lib/local/task-book.js';

/** A task's address at a loopback port, as a routing stand-in gives it (none when there is no port). */
export const atLoopback = (port: number | undefined): TaskAddress | undefined =>
  port === undefined ? undefined : { host: '127.0.0.1', port };
