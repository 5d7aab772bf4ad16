/** Whose containers the runtime in use may run (lib/containers/run-policy.ts), without the runtime on Lambda. */
export { runPolicy } from './container-runtime.js';
