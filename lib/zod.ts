/**
 * The one zod every bundled module uses: zod/mini, whose functions tree-shake (about 25 KiB in
 * a bundle where classic zod's chained methods weigh 90 KiB), with the English messages classic
 * zod loads by default, so clients read the same "Too big: expected number to be <=365".
 * Modules import it as `import * as z from '…/zod.js'`. Biome refuses `zod` and `zod/mini` imports anywhere else in lib/ and functions/ (biome.jsonc).
 */
import en from 'zod/v4/locales/en.js';
import { config } from 'zod/mini';

config(en());

// Re-exported name by name (not as one namespace object), so esbuild keeps only what is used.
export * from 'zod/mini';
