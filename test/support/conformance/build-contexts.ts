import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';

/** A build context as the CLI packs one: the gzipped tar of its files. */
export async function buildContextOf(files: Record<string, string>): Promise<Buffer> {
  const archive = pack();
  for (const [name, text] of Object.entries(files)) archive.entry({ name }, text);
  archive.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of archive) chunks.push(chunk as Buffer);
  return gzipSync(Buffer.concat(chunks));
}

/** States a deploy does not leave. */
export const SETTLED_DEPLOY_STATES = ['live', 'failed', 'superseded'];
