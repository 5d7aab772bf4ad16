/*
 * A container's credentials for the registry its image is on (issue 33, item 5): write-only. The
 * caller gives `registry_credentials` on create or PATCH; the record keeps only that some are set
 * (`registry_credentials_set`), and the credentials themselves live in a vault: a Secrets Manager
 * secret per container on AWS, a file only the stack's user may read locally. The domain never
 * holds them beyond the request that brought them, and never logs them.
 */

/** What the owner gives: a registry account, or a token as the password. */
export interface RegistryCredentials {
  username: string;
  password: string;
}

/**
 * How a runtime gets at a container's credentials when it pulls: given inline to a runtime that
 * pulls itself (the engine's X-Registry-Auth), or named as the secret the runtime's own pull
 * reads (ECS repositoryCredentials: the task execution role reads it, no function does).
 */
export type PullCredentials = ({ kind: 'inline' } & RegistryCredentials) | { kind: 'secret'; secretName: string };

/** Where a container's registry credentials are kept; every method is idempotent. */
export interface RegistryCredentialVault {
  /** Keeps the container's credentials, replacing any it had. */
  save(containerId: string, credentials: RegistryCredentials): Promise<void>;
  /** What its runtime pulls with, or undefined when none are kept (any more). */
  pullCredentialsFor(containerId: string): Promise<PullCredentials | undefined>;
  /** Forgets them; none kept is not an error. */
  discard(containerId: string): Promise<void>;
}

/** For a process with no vault wired: refuses to keep credentials, so a caller is never told they were kept. */
export const noRegistryCredentialVault: RegistryCredentialVault = {
  async save() {
    throw new Error('This function was composed without a registry credential vault');
  },
  async pullCredentialsFor() {
    return undefined;
  },
  async discard() {},
};

/** A vault in this process's memory, for tests and the in-memory local stack (DATA_DIR=:memory:). */
export class MemoryRegistryCredentialVault implements RegistryCredentialVault {
  private readonly kept = new Map<string, RegistryCredentials>();

  async save(containerId: string, credentials: RegistryCredentials): Promise<void> {
    this.kept.set(containerId, { username: credentials.username, password: credentials.password });
  }

  async pullCredentialsFor(containerId: string): Promise<PullCredentials | undefined> {
    const credentials = this.kept.get(containerId);
    return credentials ? { kind: 'inline', ...credentials } : undefined;
  }

  async discard(containerId: string): Promise<void> {
    this.kept.delete(containerId);
  }
}
