import { createReadStream } from 'node:fs';
import { posix } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { extract } from 'tar-stream';

/** A context past this many bytes unpacked is refused: a small gzip can unpack to far more than the machine holds. */
export const MAX_UNPACKED_BYTES = 4 * 1024 ** 3;

/** Why a build context cannot be built, in words its owner can act on; undefined when it can. */
export type ContextProblem = string | undefined;

/** The entry's path inside the context, or undefined when it leaves it (absolute, or through `..`). */
function insideContext(name: string): string | undefined {
  if (name.startsWith('/') || /^[a-zA-Z]:[\\/]/.test(name)) return undefined;
  const normalized = posix.normalize(name.replace(/\\/g, '/'));
  if (normalized === '..' || normalized.startsWith('../')) return undefined;
  return normalized.replace(/^\.\//, '').replace(/\/$/, '');
}

/**
 * Reads a gzipped tar through once, before the engine sees it: every entry must stay inside the
 * context (no absolute path, no `..`, no link whose target leaves it, no device), the unpacked size
 * stays within MAX_UNPACKED_BYTES, and the Dockerfile named must be there as a regular file.
 */
export async function checkBuildContext(path: string, dockerfile: string): Promise<ContextProblem> {
  const wanted = insideContext(dockerfile);
  if (!wanted) return `the Dockerfile path ${JSON.stringify(dockerfile)} leaves the context`;
  let problem: ContextProblem;
  let unpacked = 0;
  let foundDockerfile = false;
  const entries = extract();
  entries.on('entry', (header, stream, next) => {
    stream.resume();
    stream.on('end', next);
    if (problem) return;
    const name = insideContext(header.name);
    if (name === undefined) {
      problem = `the context holds a path that leaves it: ${JSON.stringify(header.name)}`;
      return;
    }
    unpacked += header.size ?? 0;
    if (unpacked > MAX_UNPACKED_BYTES) problem = `the context unpacks to more than ${MAX_UNPACKED_BYTES} bytes`;
    if (header.type === 'symlink' || header.type === 'link') {
      const target = header.linkname ?? '';
      const resolved = header.type === 'symlink' ? posix.join(posix.dirname(name), target) : target;
      if (target.startsWith('/') || insideContext(resolved) === undefined) {
        problem = `the context holds a link that leaves it: ${JSON.stringify(header.name)} → ${JSON.stringify(target)}`;
      }
    } else if (header.type !== 'file' && header.type !== 'directory') {
      problem = `the context holds an entry of a kind a build does not take (${header.type}): ${JSON.stringify(header.name)}`;
    }
    if (name === wanted && header.type === 'file') foundDockerfile = true;
  });
  try {
    await pipeline(createReadStream(path), createGunzip(), entries);
  } catch {
    return 'the context is not a gzipped tar';
  }
  if (problem) return problem;
  if (!foundDockerfile) return `no Dockerfile in the context (looked for ${wanted})`;
  return undefined;
}
