import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkBuildContext } from '../../../lib/local/build-context.js';

let dir: string;
let counter = 0;

type Entry = { name: string; body?: string; type?: 'symlink' | 'link' | 'fifo'; linkname?: string };

async function contextFile(entries: Entry[], gzip = true): Promise<string> {
  const archive = pack();
  const chunks: Buffer[] = [];
  archive.on('data', (chunk) => chunks.push(chunk as Buffer));
  const ended = new Promise<void>((resolve) => archive.on('end', () => resolve()));
  for (const entry of entries) {
    archive.entry(
      { name: entry.name, ...(entry.type ? { type: entry.type } : {}), ...(entry.linkname ? { linkname: entry.linkname } : {}) },
      entry.body ?? '',
    );
  }
  archive.finalize();
  await ended;
  const path = join(dir, `context-${(counter += 1)}.tar.gz`);
  await writeFile(path, gzip ? gzipSync(Buffer.concat(chunks)) : Buffer.concat(chunks));
  return path;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'build-context-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('checkBuildContext', () => {
  it('accepts a context with its Dockerfile, directories and links that stay inside', async () => {
    const path = await contextFile([
      { name: 'Dockerfile', body: 'FROM scratch' },
      { name: 'src/', type: undefined },
      { name: 'src/app.js', body: 'x' },
      { name: 'src/current', type: 'symlink', linkname: 'app.js' },
    ]);
    expect(await checkBuildContext(path, 'Dockerfile')).toBeUndefined();
  });

  it('finds a Dockerfile given by its path inside the context, written with ./', async () => {
    const path = await contextFile([{ name: './docker/Dockerfile.prod', body: 'FROM scratch' }]);
    expect(await checkBuildContext(path, 'docker/Dockerfile.prod')).toBeUndefined();
  });

  it.each([
    [[{ name: 'Dockerfile' }, { name: '../etc/passwd', body: 'x' }], 'the context holds a path that leaves it: "../etc/passwd"'],
    [[{ name: 'Dockerfile' }, { name: '/etc/passwd', body: 'x' }], 'the context holds a path that leaves it: "/etc/passwd"'],
    [[{ name: 'Dockerfile' }, { name: 'a/../../b', body: 'x' }], 'the context holds a path that leaves it: "a/../../b"'],
    [[{ name: 'Dockerfile' }, { name: 'l', type: 'symlink', linkname: '/etc' }], 'the context holds a link that leaves it: "l" → "/etc"'],
    [
      [{ name: 'Dockerfile' }, { name: 'sub/l', type: 'symlink', linkname: '../../x' }],
      'the context holds a link that leaves it: "sub/l" → "../../x"',
    ],
    [[{ name: 'Dockerfile' }, { name: 'f', type: 'fifo' }], 'the context holds an entry of a kind a build does not take (fifo): "f"'],
    [[{ name: 'app.js', body: 'x' }], 'no Dockerfile in the context (looked for Dockerfile)'],
  ] as Array<[Entry[], string]>)('refuses %j: %s', async (entries, reason) => {
    expect(await checkBuildContext(await contextFile(entries), 'Dockerfile')).toBe(reason);
  });

  it('refuses what is not a gzipped tar, and a Dockerfile path that leaves the context', async () => {
    expect(await checkBuildContext(await contextFile([{ name: 'Dockerfile' }], false), 'Dockerfile')).toBe(
      'the context is not a gzipped tar',
    );
    expect(await checkBuildContext(await contextFile([{ name: 'Dockerfile' }]), '../Dockerfile')).toBe(
      'the Dockerfile path "../Dockerfile" leaves the context',
    );
  });
});
