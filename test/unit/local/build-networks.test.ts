import { setTimeout as sleep } from 'node:timers/promises';
import type Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { AccountBuildNetworks } from '../../../lib/local/build-networks.js';

/** An engine with networks in memory that counts what it is asked: each call is time on a build's way to its start. */
function engineWithNetworks() {
  const networks = new Set<string>();
  const asked: string[] = [];
  const engine = {
    getNetwork: (name: string) => ({
      inspect: async () => {
        asked.push(`inspect ${name}`);
        if (!networks.has(name)) throw Object.assign(new Error('no such network'), { statusCode: 404 });
        return { Name: name };
      },
      remove: async () => {
        asked.push(`remove ${name}`);
        networks.delete(name);
      },
    }),
    listNetworks: async () => [],
    createNetwork: async ({ Name }: { Name: string }) => {
      asked.push(`create ${Name}`);
      networks.add(Name);
    },
  } as unknown as Docker;
  return { engine, networks, asked };
}

describe('AccountBuildNetworks', () => {
  it('hands the build the network made ahead during the upload without asking the engine again', async () => {
    // Prepare
    const { engine, asked } = engineWithNetworks();
    const networks = new AccountBuildNetworks(engine, 'stack', 60_000);

    // Act
    await networks.prepare('account-1');
    const name = await networks.acquire('account-1');
    networks.release('account-1');

    // Assess
    expect(asked).toEqual([`inspect ${name}`, `create ${name}`]);
    await networks.removeAll();
  });

  it('asks the engine again once the network was removed after its linger', async () => {
    // Prepare
    const { engine, networks: made, asked } = engineWithNetworks();
    const networks = new AccountBuildNetworks(engine, 'stack', 10);
    const name = await networks.acquire('account-1');
    networks.release('account-1');
    await sleep(50);
    expect(made.has(name)).toBe(false);

    // Act
    await networks.acquire('account-1');

    // Assess
    expect(made.has(name)).toBe(true);
    expect(asked).toEqual([`inspect ${name}`, `create ${name}`, `remove ${name}`, `inspect ${name}`, `create ${name}`]);
    networks.release('account-1');
    await networks.removeAll();
  });
});
