import { NotFoundError } from '../errors.js';
import type { Caller, StoredContainer } from './container.js';
import type { ContainerStore } from './container-store.js';

/**
 * The container, if the caller may see it: its owner or an admin. Anyone else gets the same
 * 404 as for a container that does not exist, so ids of other users' containers reveal nothing.
 */
export async function containerVisibleTo(
  store: Pick<ContainerStore, 'get'>,
  caller: Caller,
  containerId: string,
): Promise<StoredContainer> {
  return visibleAsRead(await store.get(containerId), caller, containerId);
}

/** The same rule, on the container as the caller has read it already. */
export function visibleAsRead(container: StoredContainer | undefined, caller: Caller, containerId: string): StoredContainer {
  if (!container || container.id !== containerId || (caller.role !== 'admin' && container.userId !== caller.userId)) {
    throw new NotFoundError('Container not found');
  }
  return container;
}
