import type Docker from 'dockerode';
import { describeError, log } from '../log.js';
import { LABEL } from './engine-container-spec.js';

/**
 * One call of the docker runtime on the engine, described as data the way dockerode describes
 * its own (`lib/container.js`: which statuses mean what): what is asked, and the failure statuses
 * that answer the call with "nothing there" rather than fail it. Every call goes over the one
 * client the runtime was given (its modem is the transport), through `callEngine`.
 */
export interface EngineCall<T> {
  /** Names the call in a log line when it fails. */
  what: string;
  ask(engine: Docker): Promise<T>;
  /** Failure statuses that answer the call with nothing (undefined). */
  nothingOn: readonly number[];
}

const statusOf = (error: unknown): number | undefined =>
  error instanceof Error && 'statusCode' in error && typeof error.statusCode === 'number' ? error.statusCode : undefined;

/** The calls on this stack's engine containers. */
export const ENGINE_CALLS = {
  /** The container's engine view; undefined when there is none (404). */
  inspect: (name: string): EngineCall<Docker.ContainerInspectInfo> => ({
    what: 'Inspecting an engine container',
    ask: (engine) => engine.getContainer(name).inspect(),
    nothingOn: [404],
  }),
  /** SIGTERM (the image's stop signal), then SIGKILL after `graceS`; stopped already (304) or gone (404) is stopped. */
  stop: (name: string, graceS: number): EngineCall<void> => ({
    what: 'Stopping an engine container',
    ask: (engine) => engine.getContainer(name).stop({ t: graceS }),
    nothingOn: [304, 404],
  }),
  /** Removes it with its anonymous volumes (`force`: running or not); gone (404) or being removed already (409) is removed. */
  remove: (nameOrId: string, force: boolean): EngineCall<void> => ({
    what: 'Removing an engine container',
    ask: (engine) => engine.getContainer(nameOrId).remove({ v: true, ...(force ? { force: true } : {}) }),
    nothingOn: [404, 409],
  }),
  /**
   * Podman's own API (libpod) only: does everything a start does but start the container's
   * process: mounts its filesystem, writes its OCI spec, sets its network up, and has the OCI
   * runtime create it ("performs all tasks necessary for starting the container … but does not
   * start the container", https://docs.podman.io/en/v4.2/_sources/markdown/podman-init.1.md.txt).
   * A start then only starts the process. Initialized already is 304. Podman serves its libpod
   * routes under a version prefix only; Docker has no such route (404).
   */
  init: (name: string): EngineCall<void> => ({
    what: 'Initializing an engine container',
    ask: (engine) =>
      new Promise<void>((resolve, reject) => {
        engine.modem.dial(
          {
            path: `/v4.0.0/libpod/containers/${encodeURIComponent(name)}/init`,
            method: 'POST',
            options: {},
            statusCodes: { 204: true, 304: true, 404: 'no such container or no such route', 500: 'server error' },
          },
          (error: unknown) => (error ? reject(error) : resolve()),
        );
      }),
    nothingOn: [],
  }),
  /** The engine containers of a stack (of one container, if given), in the given states (any, if none). */
  list: (stackId: string, states?: string[], containerId?: string): EngineCall<Docker.ContainerInfo[]> => ({
    what: 'Listing engine containers',
    ask: (engine) =>
      engine.listContainers({
        all: true,
        filters: {
          label: [`${LABEL.stack}=${stackId}`, ...(containerId ? [`${LABEL.containerId}=${containerId}`] : [])],
          ...(states ? { status: states } : {}),
        },
      }),
    nothingOn: [],
  }),
};

/** Runs a call: its answer, or undefined on a failure status it lists; any other failure is thrown. */
export async function callEngine<T>(engine: Docker, call: EngineCall<T>): Promise<T | undefined> {
  try {
    return await call.ask(engine);
  } catch (error) {
    const status = statusOf(error);
    if (status !== undefined && call.nothingOn.includes(status)) return undefined;
    throw error;
  }
}

/** As `callEngine`, for a call whose failure only leaves work for later: logged, never thrown. */
export async function callEngineOrWarn(engine: Docker, call: EngineCall<void>, context: Record<string, unknown> = {}): Promise<void> {
  await callEngine(engine, call).catch((error: unknown) => {
    log.warn(`${call.what} failed`, { ...context, ...describeError(error) });
  });
}
