import { readdir, readFile } from 'node:fs/promises';
import { call } from '../api-client.js';
import { appRequest } from '../app-request.js';
import { pollUntil } from '../poll.js';
import { buildContextOf, SETTLED_DEPLOY_STATES } from './build-contexts.js';
import type { Behaviour, ConformanceHarness, CreateInput, Readout } from './journeys.js';

/** What a behaviour becomes on a local runtime: the create body's workload fields. */
export type WorkloadFor = (behaviour: Behaviour) => { image?: string; command: string[]; env: Record<string, string> };

/**
 * A local stack (test/support/local-stack.ts) as the journeys see it: its HTTP API with a
 * personal access token, and each app through the local proxy at its `url`.
 */
export function localHarness(
  baseUrl: string,
  token: string,
  workloadFor: WorkloadFor,
  /** What else the runtime may have left of a container (e.g. engine containers). */
  moreLeftovers: (containerId: string) => Promise<string[]> = async () => [],
): ConformanceHarness {
  const api = (method: string, path: string, body?: unknown) => call(baseUrl, method, path, { token, ...(body ? { body } : {}) });
  const urls = new Map<string, string>();
  const readout = (data: Record<string, any>): Readout => ({
    state: data.state,
    state_reason: data.state_reason,
    restart_count: data.restart_count,
  });
  const transition = async (id: string, verb: string): Promise<Readout> => {
    let response = await api('POST', `/api/v1/containers/${id}/${verb}`);
    // 504 TIMEOUT says "start it again to keep waiting" (the start budget, 10 s in tests, outrun on a loaded machine): a client does.
    for (let again = 0; verb === 'start' && again < 2 && response.status === 504 && response.body?.error?.code === 'TIMEOUT'; again += 1) {
      response = await api('POST', `/api/v1/containers/${id}/${verb}`);
    }
    if (response.status !== 200) throw new Error(`${verb} answered ${response.status}: ${response.text}`);
    return readout(response.body.data);
  };
  return {
    settleMs: 0,
    async create(input: CreateInput) {
      const workload = workloadFor(input.behaviour);
      const response = await api('POST', '/api/v1/containers', {
        hostname: input.hostname,
        port: 8080,
        ...workload,
        ...(input.restart_policy ? { restart_policy: input.restart_policy } : {}),
        ...(input.health_check ? { health_check: input.health_check } : {}),
        ...(input.memory_mb ? { memory_mb: input.memory_mb } : {}),
      });
      // A launch that fails at once may answer 500 at create, and a loaded machine may make the
      // answer late (504) though the container was written: only the id counts.
      let data = response.body?.data;
      if (!data?.id && response.status === 504) {
        const listed = await api('GET', '/api/v1/containers?limit=100');
        data = (listed.body?.data ?? []).find((container: { hostname: string }) => container.hostname === input.hostname);
      }
      const id = data?.id;
      if (!id) throw new Error(`create answered ${response.status}: ${response.text}`);
      urls.set(id, data.url);
      return id;
    },
    async read(id) {
      const response = await api('GET', `/api/v1/containers/${id}`);
      return response.status === 404 ? undefined : readout(response.body.data);
    },
    start: (id) => transition(id, 'start'),
    stop: (id) => transition(id, 'stop'),
    restart: (id) => transition(id, 'restart'),
    async remove(id) {
      const response = await api('DELETE', `/api/v1/containers/${id}`);
      if (response.status !== 200) throw new Error(`delete answered ${response.status}: ${response.text}`);
    },
    async answer(id) {
      try {
        return (await appRequest(urls.get(id)!)).status;
      } catch {
        return 0;
      }
    },
    async leftovers(id) {
      const left: string[] = [];
      if ((await api('GET', `/api/v1/containers/${id}`)).status !== 404) left.push('its record');
      left.push(...(await processesOf(id)), ...(await moreLeftovers(id)));
      return left;
    },
    async releases(id) {
      const response = await api('GET', `/api/v1/containers/${id}/releases?limit=50`);
      if (response.status !== 200) throw new Error(`releases answered ${response.status}: ${response.text}`);
      return (response.body.data as Array<{ version: number; cause: string; workload: { env: Record<string, string> } }>).map(
        (release) => ({ version: release.version, cause: release.cause, env: release.workload.env }),
      );
    },
    async setEnv(id, env) {
      const response = await api('PATCH', `/api/v1/containers/${id}`, { env });
      if (response.status !== 200) throw new Error(`PATCH answered ${response.status}: ${response.text}`);
    },
    async rollback(id, version) {
      const response = await api('POST', `/api/v1/containers/${id}/releases/${version}/rollback`);
      return { status: response.status, ...(response.status === 200 ? { release: response.body.data.release } : {}) };
    },
    async deploy(id, dockerfile) {
      const body = await buildContextOf({ Dockerfile: dockerfile });
      const created = await api('POST', `/api/v1/containers/${id}/deploys`, { size_bytes: body.length });
      if (created.status !== 201) return { status: created.status };
      const { id: deployId, upload } = created.body.data;
      await fetch(upload.url, { method: upload.method, headers: upload.headers, body });
      const settled = await pollUntil(
        () => api('GET', `/api/v1/containers/${id}/deploys/${deployId}`),
        (found) => SETTLED_DEPLOY_STATES.includes(found.body?.data?.state),
        120_000,
      );
      const data = settled.body.data;
      return { status: 201, state: data.state, stateReason: data.state_reason, release: data.release };
    },
  };
}

/** Processes of this user whose environment names the container (the process runtime sets CONTAINER_ID). */
async function processesOf(containerId: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of (await readdir('/proc').catch(() => [])).filter((name) => /^\d+$/.test(name))) {
    const environ = await readFile(`/proc/${pid}/environ`, 'utf8').catch(() => '');
    if (environ.split('\0').includes(`CONTAINER_ID=${containerId}`)) found.push(`process ${pid}`);
  }
  return found;
}
