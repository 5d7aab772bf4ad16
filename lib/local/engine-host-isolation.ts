import type Docker from 'dockerode';
import { log } from '../log.js';
import { ensureContainerFirewall, type FirewallStatus, keepContainerFirewall } from './engine-firewall.js';

/**
 * How often the host rules are checked while tasks run, besides at each container start: the
 * engine also rewrites its chains when it reloads its networks (`podman network reload`) or the
 * host's firewall is reloaded, neither of which says so in the engine's events.
 */
const FIREWALL_CHECK_MS = 10_000;

/** The host rules: set once before the first task (synchronously), then checked and repaired again while tasks run. */
export interface HostFirewall {
  ensure(): FirewallStatus;
  /** `pruneStale`: also deletes the rules left for bridges that are gone (lib/local/engine-firewall.ts). */
  keep(options?: { pruneStale?: boolean }): Promise<FirewallStatus>;
}

/**
 * Whether the docker runtime's containers are kept off this machine's services and off each
 * other, and the checks that keep them so. Each container runs on a network of its own
 * (lib/local/engine-networks.ts), and host rules keep every such network off the host's services
 * and off the other networks (lib/local/engine-firewall.ts).
 */
export class HostIsolation {
  private isolation: { refusal?: string } | undefined;
  /** The check of the host rules under way, and whether another was asked for meanwhile. */
  private check: Promise<void> | undefined;
  private checkAgain = false;
  /** The next run also prunes the rules of bridges gone: the periodic check asked for it. */
  private pruneNext = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly firewall: HostFirewall;

  constructor(
    private readonly engine: Docker,
    firewall?: HostFirewall,
  ) {
    this.firewall = firewall ?? { ensure: ensureContainerFirewall, keep: keepContainerFirewall };
  }

  /**
   * Sets the host rules on first call. Where they cannot be set (not root, no iptables) or do not
   * apply (an engine that reports itself rootless: its containers' traffic never crosses this
   * host's rules, learnt once the engine answers), this says so loudly once and answers why: the
   * stack then runs containers for admins only (lib/wiring/local-containers.ts).
   */
  refusal(): string | undefined {
    if (!this.isolation) {
      const isolation: { refusal?: string } = {};
      this.isolation = isolation;
      const firewall = this.firewall.ensure();
      if (!firewall.ok) this.refuse(isolation, firewall.reason);
      void this.engine
        .info()
        .then((info: { SecurityOptions?: string[] }) => {
          if (info.SecurityOptions?.some((option) => option.includes('rootless')))
            this.refuse(isolation, "the engine runs rootless: its containers' traffic does not cross this host's firewall");
        })
        .catch(() => undefined);
    }
    return this.isolation.refusal;
  }

  /**
   * Checks the host rules again and puts them back first where the engine has put its own ahead
   * (lib/local/engine-firewall.ts): the engine rewrites its chains as it sets a network up, at
   * every container start. Checks asked for while one runs share one more run after it, so a
   * start that follows a check in progress is still seen. `pruneStale` (the periodic check) also
   * deletes the rules of bridges gone, which a task's start leaves for later.
   */
  keep(options: { pruneStale?: boolean } = {}): Promise<void> {
    if (this.refusal() !== undefined) return Promise.resolve();
    if (options.pruneStale) this.pruneNext = true;
    if (this.check) {
      this.checkAgain = true;
      return this.check;
    }
    const check = (async () => {
      do {
        this.checkAgain = false;
        const pruneStale = this.pruneNext;
        this.pruneNext = false;
        const firewall = await this.firewall.keep({ pruneStale });
        if (!firewall.ok && this.isolation) this.refuse(this.isolation, firewall.reason);
      } while (this.checkAgain);
    })().finally(() => {
      this.check = undefined;
    });
    this.check = check;
    return check;
  }

  /** Checks every FIREWALL_CHECK_MS from now on, until `stopChecking`. */
  keepChecking(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.keep({ pruneStale: true }), FIREWALL_CHECK_MS);
    this.timer.unref();
  }

  stopChecking(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private refuse(isolation: { refusal?: string }, reason: string): void {
    isolation.refusal ??= `Containers cannot be isolated from this machine's services and from each other (${reason}), so only admins may run containers here`;
    log.error(isolation.refusal);
  }
}
