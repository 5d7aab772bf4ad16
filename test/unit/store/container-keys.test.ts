import { describe, expect, it } from 'vitest';
import { keys } from '../../../lib/store/keys.js';

const containerId = '0190a3e4-5b6c-7d8e-9f01-23456789abcd';
const userId = '0190a3e4-0000-7000-8000-000000000001';

describe('container keys', () => {
  it('keys a container by its id', () => {
    expect(keys.container(containerId)).toEqual({ pk: `CONTAINER#${containerId}`, sk: 'CONTAINER' });
  });

  it("puts a container in its owner's partition of the owner index, sorted by id", () => {
    expect(keys.containerOfOwner(userId, containerId)).toEqual({
      gsi1pk: `OWNER#${userId}#CONTAINER`,
      gsi1sk: `CONTAINER#${containerId}`,
    });
    expect(keys.containersOfOwnerPartition(userId)).toBe(keys.containerOfOwner(userId, containerId).gsi1pk);
  });

  it('puts every container in the one service-wide partition of the global index', () => {
    expect(keys.allContainers(containerId)).toEqual({ gsi2pk: 'CONTAINERS', gsi2sk: `CONTAINER#${containerId}` });
    expect(keys.allContainersPartition).toBe(keys.allContainers(containerId).gsi2pk);
  });

  it('keys a hostname claim by the hostname alone, so one name has one item service-wide', () => {
    expect(keys.hostname('web-1')).toEqual({ pk: 'HOSTNAME#web-1', sk: 'HOSTNAME' });
  });

  it('keeps container items apart from the other entities of the table', () => {
    const partitions = [keys.container(containerId).pk, keys.hostname(containerId).pk, keys.user(containerId).pk];

    expect(new Set(partitions).size).toBe(3);
  });
});
