import type Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { inspectImage } from '../../../lib/local/image-inspects.js';

/** An engine client that answers image inspects after `delayMs`, counting them; `images` maps a name to its id. */
function countingEngine(socketPath: string, images: Record<string, string>, delayMs = 20) {
  const asked: string[] = [];
  const engine = {
    modem: { socketPath },
    getImage: (name: string) => ({
      inspect: async () => {
        asked.push(name);
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        const id = images[name];
        if (!id) throw Object.assign(new Error('no such image'), { statusCode: 404 });
        return { Id: id } as Docker.ImageInspectInfo;
      },
    }),
  } as unknown as Docker;
  return { engine, asked };
}

describe('inspectImage', () => {
  it('asks the engine once for the same image asked for at the same moment, and again once that answer is in', async () => {
    const { engine, asked } = countingEngine('/run/a.sock', { 'web:1': 'sha256:1' });

    const together = await Promise.all([inspectImage(engine, 'web:1'), inspectImage(engine, 'web:1'), inspectImage(engine, 'web:1')]);
    const later = await inspectImage(engine, 'web:1');

    expect(together.map((image) => image.Id)).toEqual(['sha256:1', 'sha256:1', 'sha256:1']);
    expect(later.Id).toBe('sha256:1');
    expect(asked).toEqual(['web:1', 'web:1']);
  });

  it('keeps other names and other engines apart, and gives each asker a missing image as its failure', async () => {
    const first = countingEngine('/run/a.sock', { 'web:1': 'sha256:a' });
    const second = countingEngine('/run/b.sock', { 'web:1': 'sha256:b' });

    const [onFirst, onSecond, missing] = await Promise.all([
      inspectImage(first.engine, 'web:1'),
      inspectImage(second.engine, 'web:1'),
      inspectImage(first.engine, 'web:2').catch((error: { statusCode?: number }) => error.statusCode),
    ]);

    expect([onFirst.Id, onSecond.Id, missing]).toEqual(['sha256:a', 'sha256:b', 404]);
    expect(first.asked).toEqual(['web:1', 'web:2']);
    expect(second.asked).toEqual(['web:1']);
  });
});
