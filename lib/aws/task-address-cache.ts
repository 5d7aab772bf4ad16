/** How long a task's address is reused without asking ECS again. */
export const TASK_ADDRESS_TTL_MS = 10_000;
/** Containers whose task address one instance remembers; past it, the oldest is forgotten. */
export const TASK_ADDRESSES_KEPT = 500;

/**
 * The private address of each container's current task, as DescribeTasks answered it, remembered
 * per function instance for a short while (lib/wiring/wake.ts). A request the proxy sends to the
 * wake endpoint while the container runs (its route not yet in the resolver's answer) is forwarded
 * at once, and without this each such request was one DescribeTasks: ECS allows the account about
 * 20 a second, shared with every other caller in it
 * (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/request-throttling.html), so a page
 * load's requests could throttle the API's own starts. An entry answers only for the task it was
 * read for (a restart's new task is asked for again), concurrent misses for one container share
 * one call, and a call that fails or finds no address is not remembered.
 */
export class TaskAddressCache {
  private readonly entries = new Map<string, { taskArn: string; address: Promise<string | undefined>; until: number }>();

  constructor(private readonly options: { ttlMs?: number; maxContainers?: number; now?: () => number } = {}) {}

  addressOf(containerId: string, taskArn: string, describe: () => Promise<string | undefined>): Promise<string | undefined> {
    const now = (this.options.now ?? Date.now)();
    const known = this.entries.get(containerId);
    // Every read re-inserts its entry, so the map's order is the order of last reads and its first key the oldest.
    this.entries.delete(containerId);
    if (known && known.taskArn === taskArn && known.until > now) {
      this.entries.set(containerId, known);
      return known.address;
    }
    const address = describe();
    const entry = { taskArn, address, until: now + (this.options.ttlMs ?? TASK_ADDRESS_TTL_MS) };
    this.entries.set(containerId, entry);
    const forget = () => {
      if (this.entries.get(containerId) === entry) this.entries.delete(containerId);
    };
    address.then((found) => found ?? forget(), forget);
    while (this.entries.size > (this.options.maxContainers ?? TASK_ADDRESSES_KEPT)) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
    return address;
  }
}
