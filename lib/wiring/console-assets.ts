import { buildConsoleAssets, type ConsoleAssets } from '../console/build-console.js';

/**
 * The console's files, built when the local server or a test first loads the console's
 * function (no separate build step). Lambda bundles never contain this module: infra/bundling.ts
 * builds the console first and resolves it to the module that build wrote (package.json `imports`).
 */
export const consoleAssets: ConsoleAssets = buildConsoleAssets();
