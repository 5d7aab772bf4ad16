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
  /**
   * Why containers cannot be isolated here, if they cannot; `withoutRules` when the host rules
   * were never set or never apply (not root, no iptables, a rootless engine), so there is nothing
   * to check. A refusal after a failed check keeps the rules, and the checks, going.
   */
  private isolation: { refusal?: string; withoutRules?: boolean } | undefined;
  /** The run of the check under way, and the one run queued after it for every check asked for meanwhile. */
  private running: Promise<FirewallStatus> | undefined;
  private queued: Promise<FirewallStatus> | undefined;
  /** The next run also prunes the rules of bridges gone: the periodic check asked for it. */
  private pruneNext = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly firewall: HostFirewall;

  constructor(
    private readonly engine: Docker,
    firewall?: HostFirewall,
    /** Between two checks while tasks run (0: only those asked for); FIREWALL_CHECK_MS unless given. */
    private readonly checkMs = FIREWALL_CHECK_MS,
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
      const isolation: { refusal?: string; withoutRules?: boolean } = {};
      this.isolation = isolation;
      const firewall = this.firewall.ensure();
      if (!firewall.ok) this.refuse(isolation, firewall.reason, true);
      void this.engine
        .info()
        .then((info: { SecurityOptions?: string[] }) => {
          if (info.SecurityOptions?.some((option) => option.includes('rootless')))
            this.refuse(isolation, "the engine runs rootless: its containers' traffic does not cross this host's firewall", true);
        })
        .catch(() => undefined);
    }
    return this.isolation.refusal;
  }

  /**
   * Checks the host rules again and puts them back first where the engine has put its own ahead
   * (lib/local/engine-firewall.ts): the engine rewrites its chains as it sets a network up, at
   * every container start and every init (a spare made ready at a stop). Answers the outcome of a
   * run begun after the call: the one queued behind the run under way, which every check asked
   * for meanwhile shares, so a start that follows a check in progress is still seen, and a caller
   * waits for at most two runs however many network setups follow its call (a task's start waits
   * for this answer). Where there are no rules to keep (refused from the start: admins'
   * containers only) it answers ok. After a failed check it still checks and answers the outcome:
   * a task whose check fails never serves, even when another check failed first and refused.
   * `pruneStale` (the periodic check) also deletes the rules of bridges gone, which a task's
   * start leaves for later.
   */
  keep(options: { pruneStale?: boolean } = {}): Promise<FirewallStatus> {
    this.refusal();
    if (options.pruneStale) this.pruneNext = true;
    if (this.isolation?.withoutRules) return Promise.resolve({ ok: true });
    if (this.queued) return this.queued;
    if (!this.running) return this.run();
    const next = () => {
      this.queued = undefined;
      return this.run();
    };
    const queued = this.running.then(next, next);
    this.queued = queued;
    return queued;
  }

  private run(): Promise<FirewallStatus> {
    const run = (async () => {
      const pruneStale = this.pruneNext;
      this.pruneNext = false;
      const firewall = await this.firewall.keep({ pruneStale });
      if (!firewall.ok && this.isolation) this.refuse(this.isolation, firewall.reason);
      return firewall;
    })().finally(() => {
      if (this.running === run) this.running = undefined;
    });
    this.running = run;
    return run;
  }

  /** Checks every `checkMs` from now on, until `stopChecking`. */
  keepChecking(): void {
    if (this.timer || this.checkMs <= 0) return;
    this.timer = setInterval(() => void this.keep({ pruneStale: true }), this.checkMs);
    this.timer.unref();
  }

  stopChecking(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private refuse(isolation: { refusal?: string; withoutRules?: boolean }, reason: string, withoutRules = false): void {
    if (withoutRules) isolation.withoutRules = true;
    isolation.refusal ??= `Containers cannot be isolated from this machine's services and from each other (${reason}), so only admins may run containers here`;
    log.error(isolation.refusal);
  }
}
