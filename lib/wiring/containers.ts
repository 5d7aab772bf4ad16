import { availableParallelism, totalmem } from 'node:os';
import { config } from '../config.js';
import type { ContainerLeftovers } from '../containers/container-core.js';
import { ContainerService, type ContainerServiceOptions, type SizeLimits } from '../containers/container-service.js';
import type { TaskUsageSource } from '../containers/metrics.js';
import { type RestartScheduler, TimerRestartScheduler } from '../containers/restart-policy.js';
import type { QuotaLimits } from '../containers/quota.js';
import type { ContainerRuntime } from '../containers/runtime.js';
import type { RetireRoutes } from '../containers/retire-routes.js';
import type { RunPolicy } from '../containers/run-policy.js';
import type { ImageDigests } from '../containers/release.js';
import { DynamoContainerStore } from '../store/dynamo-container-store.js';
import { registryCredentialSecretNames } from '../aws/registry-credential-secrets.js';
import { builtImageRepositoriesFrom } from '../containers/built-images.js';
import { MemoryRegistryCredentialVault, type RegistryCredentialVault } from '../containers/registry-credentials.js';
import { FileRegistryCredentialVault } from '../local/file-registry-credentials.js';
import { volumesByIds } from '../store/volume-claims.js';

/** One store per process, shared by every request it serves. */
export const containerStore = new DynamoContainerStore();

/**
 * Where deferred work waits (restarts by the restart policy after their backoff, a restart's old
 * task after the drain) when no queue is wired: timers in this process (the local stack).
 */
export const restartScheduler = new TimerRestartScheduler();

/** Every user's limits, from QUOTA_MAX_CONTAINERS, QUOTA_MAX_RUNNING_CPU and QUOTA_MAX_MEMORY_MB. */
export const quotaLimits: QuotaLimits = {
  maxContainers: config.QUOTA_MAX_CONTAINERS,
  maxRunningCpu: config.QUOTA_MAX_RUNNING_CPU,
  maxRunningMemoryMb: config.QUOTA_MAX_MEMORY_MB,
};

/**
 * On the local stack, no container asks for more than this machine has (its CPUs, its memory),
 * or than LOCAL_MAX_CPU_CORES / LOCAL_MAX_MEMORY_MB allow when set; on AWS Fargate's sizes bound them.
 */
export const sizeLimits: SizeLimits | undefined =
  config.CONTAINER_RUNTIME === 'ecs'
    ? undefined
    : {
        cpuCores: config.LOCAL_MAX_CPU_CORES
          ? { max: config.LOCAL_MAX_CPU_CORES, setBy: 'LOCAL_MAX_CPU_CORES' }
          : { max: availableParallelism(), setBy: 'this machine' },
        memoryMb: config.LOCAL_MAX_MEMORY_MB
          ? { max: config.LOCAL_MAX_MEMORY_MB, setBy: 'LOCAL_MAX_MEMORY_MB' }
          : { max: Math.floor(totalmem() / 1024 / 1024), setBy: 'this machine' },
      };

/**
 * On ECS a container mounts one volume: a task has one role, and each volume's role may mount only
 * its own access point (docs/volumes.md, "Volumes on AWS"), which is what keeps accounts apart.
 */
export const mountLimit =
  config.CONTAINER_RUNTIME === 'ecs'
    ? { max: 1, setBy: "on AWS a task runs as one volume's role, which mounts that volume only" }
    : undefined;

/**
 * What every launch reads a container's registry credentials from: on ECS only the secret's name
 * (ECS's pull reads it; no function does), locally the files under REGISTRY_CREDENTIALS_DIR, else
 * this process's memory.
 */
export const launchRegistryCredentials: RegistryCredentialVault = config.REGISTRY_CREDENTIALS_SECRET_PREFIX
  ? registryCredentialSecretNames(config.REGISTRY_CREDENTIALS_SECRET_PREFIX)
  : config.REGISTRY_CREDENTIALS_DIR
    ? new FileRegistryCredentialVault(config.REGISTRY_CREDENTIALS_DIR)
    : new MemoryRegistryCredentialVault();

const builtImages = builtImageRepositoriesFrom(config.BUILT_IMAGE_REPOSITORY);

const notWired = (what: string) => async (): Promise<never> => {
  throw new Error(`This function was composed without a ${what}`);
};

/**
 * For a function whose route never reaches the runtime (get, list, task-state events): every call
 * of the port, whichever it names, fails, so a call the port gains needs no line here.
 */
const noRuntime = new Proxy<ContainerRuntime>(Object.create(null), {
  get: (_target, call) => notWired(`container runtime (its ${String(call)})`),
});
/** For a function whose route never reads task usage (all but get-metrics). */
const noUsage: TaskUsageSource = { usageOf: notWired('task usage source') };

/**
 * The container service over the DynamoDB store with exactly the adapters a function uses:
 * each function module passes the runtime (lib/wiring/container-runtime.ts) or usage source
 * (lib/wiring/task-usage.ts) its route calls, so its bundle carries only those SDK clients,
 * and, with a runtime that runs callers' code, whose code that runtime may run. A function that
 * applies task statuses or waits for tasks passes the deferred work of its runtime too: on AWS
 * the queues, which also make RUNNING probed before it counts (docs/containers.md, "Readiness on AWS").
 */
export function containerServiceWith(
  adapters: {
    runtime?: ContainerRuntime;
    usage?: TaskUsageSource;
    deferredWork?: RestartScheduler | undefined;
    runPolicy?: RunPolicy;
    /** Where routes are published (the task state and probe functions with routing): a restart's old task follows them. */
    retireRoutes?: RetireRoutes;
    imageDigests?: ImageDigests | undefined;
    /** For a function that keeps registry credentials (create, PATCH, delete): `#wiring/registry-credentials`. */
    registryCredentials?: RegistryCredentialVault;
    /** For a function that deletes containers: `#wiring/container-leftovers`. */
    leftovers?: ContainerLeftovers;
  } = {},
): ContainerService {
  return new ContainerService(containerStore, adapters.runtime ?? noRuntime, adapters.usage ?? noUsage, containerServiceOptions(adapters));
}

/** The service's options from the configuration, for containerServiceWith and the local stack's sleeping service. */
export function containerServiceOptions(
  adapters: {
    deferredWork?: RestartScheduler | undefined;
    runPolicy?: RunPolicy;
    /** Where routes are published (the task state and probe functions with routing): a restart's old task follows them. */
    retireRoutes?: RetireRoutes;
    imageDigests?: ImageDigests | undefined;
    registryCredentials?: RegistryCredentialVault;
    leftovers?: ContainerLeftovers;
  } = {},
): ContainerServiceOptions {
  return {
    startBudgetMs: config.START_BUDGET_MS,
    quota: quotaLimits,
    drainMs: config.RESTART_DRAIN_MS,
    restartScheduler: adapters.deferredWork ?? restartScheduler,
    probedReadiness: adapters.deferredWork !== undefined,
    volumes: { getMany: volumesByIds },
    ...(adapters.runPolicy ? { runPolicy: adapters.runPolicy } : {}),
    ...(adapters.retireRoutes ? { retireRoutes: adapters.retireRoutes } : {}),
    ...(adapters.imageDigests ? { imageDigests: adapters.imageDigests } : {}),
    ...(sizeLimits ? { sizeLimits } : {}),
    ...(mountLimit ? { mountLimit } : {}),
    registryCredentials: adapters.registryCredentials ?? launchRegistryCredentials,
    ...(builtImages ? { builtImages } : {}),
    ...(adapters.leftovers ? { leftovers: adapters.leftovers } : {}),
  };
}
