import { AssetHashType, BundlingOutput, DockerImage } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { bundleHandlers, type BundleFile } from '../bundling.js';

/**
 * Lambda code for handler modules, bundled locally by esbuild and never in Docker. Every
 * handler registered before the first bundle is needed is built in one esbuild run:
 * bundling each function separately (as NodejsFunction does, through npx) costs about a
 * second per function, which the test budget cannot afford at 30 functions.
 */
export class FunctionBundles {
  private readonly pending = new Set<string>();
  private readonly built = new Map<string, BundleFile[]>();

  constructor(
    private readonly sourceRoot: string,
    entries: Iterable<string> = [],
  ) {
    for (const entry of entries) this.pending.add(entry);
  }

  /** The code asset for a handler module, relative to the source root. */
  codeFor(entry: string): lambda.Code {
    if (!this.built.has(entry)) this.pending.add(entry);
    return lambda.Code.fromAsset(dirname(join(this.sourceRoot, entry)), {
      assetHashType: AssetHashType.OUTPUT,
      bundling: {
        // Required by the API, never pulled: local bundling either succeeds or throws.
        image: DockerImage.fromRegistry('local-esbuild-only'),
        // Part of CDK's asset cache key, which would otherwise be the same for handlers in one directory.
        command: ['esbuild', basename(entry)],
        outputType: BundlingOutput.NOT_ARCHIVED,
        local: {
          tryBundle: (outputDir: string): boolean => {
            for (const file of this.filesOf(entry)) {
              mkdirSync(dirname(join(outputDir, file.name)), { recursive: true });
              writeFileSync(join(outputDir, file.name), file.contents);
            }
            return true;
          },
        },
      },
    });
  }

  private filesOf(entry: string): BundleFile[] {
    if (!this.built.has(entry)) {
      this.pending.add(entry);
      for (const [builtEntry, files] of bundleHandlers(this.sourceRoot, this.pending)) this.built.set(builtEntry, files);
      this.pending.clear();
    }
    const files = this.built.get(entry);
    if (!files) throw new Error(`No bundle for ${entry}`);
    return files;
  }
}
