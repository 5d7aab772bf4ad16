// Over 300 lines because it holds every volume and snapshot command of the CLI (ls, get, create, rm, snapshot,
// snapshots, restore, download) and the lookups they share.
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import type { ContainerRecord, SnapshotDownloadRecord, SnapshotRecord, VolumeRecord } from '../../lib/http/api-types.js';
import { CliError, EXIT } from './errors.js';
import { out, printJson, say } from './output.js';
import { apiCall, apiList, apiUrlOf } from './session.js';

/**
 * `container-hosting volumes …`: volumes and their snapshots (docs/volumes.md, "Volumes"), with
 * the containers' conventions: data on stdout, `--json` for the API's data, `rm` asks first, a
 * volume named by its id or its name.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SNAPSHOT_POLL_MS = 1000;
const LIST_COLUMNS = ['name', 'size_gb', 'used_gb', 'attached_to', 'id'] as const;
const SNAPSHOT_COLUMNS = ['id', 'state', 'size_bytes', 'consistent', 'created_at'] as const;

interface Globals {
  api?: string;
  json?: boolean;
  insecure?: boolean;
}

const globals = (command: Command) => command.optsWithGlobals<Globals>();
const apiOf = (command: Command) => apiUrlOf(globals(command).api, globals(command).insecure);

function show<Data>(command: Command, data: Data, human: (data: Data) => void): void {
  if (globals(command).json) printJson(data);
  else human(data);
}

function table(titles: readonly string[], rows: ReadonlyArray<readonly string[]>): void {
  const widths = titles.map((title, index) => Math.max(title.length, ...rows.map((row) => row[index]!.length)));
  const line = (values: readonly string[]) =>
    values
      .map((value, index) => value.padEnd(widths[index]!))
      .join('  ')
      .trimEnd();
  out(line(titles.map((title) => title.toUpperCase())));
  for (const row of rows) out(line(row));
}

/** The hostnames of the containers that mount the volumes given, so a person reads `web`, not an id. */
async function hostnamesOf(api: string, volumes: readonly VolumeRecord[]): Promise<Map<string, string>> {
  if (!volumes.some((volume) => volume.attached_to)) return new Map();
  const containers = await apiList<ContainerRecord>(api, '/api/v1/containers', { limit: 1000 });
  return new Map(containers.map((container) => [container.id, container.hostname]));
}

function details(volume: VolumeRecord, hostnames: ReadonlyMap<string, string>): void {
  const attached = volume.attached_to ? (hostnames.get(volume.attached_to) ?? volume.attached_to) : '-';
  const rows: Array<[string, string]> = [
    ['id', volume.id],
    ['name', volume.name],
    ['size', `${volume.size_gb} GB`],
    ['used', `${volume.used_gb} GB`],
    ['attached to', attached],
    ['from snapshot', volume.from_snapshot ?? '-'],
    ['created', volume.created_at],
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  for (const [name, value] of rows) out(`${name.padEnd(width)}  ${value}`);
}

const snapshotRows = (snapshots: readonly SnapshotRecord[]) =>
  table(
    SNAPSHOT_COLUMNS,
    snapshots.map((snapshot) =>
      SNAPSHOT_COLUMNS.map((column) =>
        // A failed snapshot says why, as a container's state does (`ps`).
        column === 'state' && snapshot.state_reason ? `${snapshot.state} (${snapshot.state_reason})` : String(snapshot[column]),
      ),
    ),
  );

/** A volume named by its id or its name; a name two volumes share must be given as an id. */
async function findVolume(api: string, name: string): Promise<VolumeRecord> {
  if (UUID.test(name)) return (await apiCall<VolumeRecord>(api, 'GET', `/api/v1/volumes/${name}`)).data;
  const named = (await apiList<VolumeRecord>(api, '/api/v1/volumes', { limit: 1000 })).filter((volume) => volume.name === name);
  if (named.length === 0) throw new CliError(`No volume named ${name}`, { code: 'NOT_FOUND' });
  if (named.length > 1)
    throw new CliError(`${named.length} volumes are named ${name}; give one by its id (volumes ls)`, { exitCode: EXIT.usage });
  return named[0]!;
}

/**
 * A snapshot by its id: the API lists snapshots per volume, so without `--volume` each of the
 * caller's volumes is asked in turn. A snapshot whose volume was deleted is found only with
 * `--volume <the deleted volume's id>`.
 */
async function findSnapshot(api: string, snapshotId: string, volume?: string): Promise<SnapshotRecord> {
  if (!UUID.test(snapshotId)) throw new CliError(`SNAPSHOT must be a snapshot id, got "${snapshotId}"`, { exitCode: EXIT.usage });
  if (volume) {
    const volumeId = UUID.test(volume) ? volume : (await findVolume(api, volume)).id;
    const found = (await apiList<SnapshotRecord>(api, `/api/v1/volumes/${volumeId}/snapshots`, { limit: 100 }).catch(() => [])).find(
      (snapshot) => snapshot.id === snapshotId,
    );
    // A deleted volume's snapshots cannot be listed; the download still finds one by its volume's id.
    return (
      found ?? { id: snapshotId, volume_id: volumeId, state: 'ready', state_reason: null, size_bytes: 0, consistent: false, created_at: '' }
    );
  }
  for (const candidate of await apiList<VolumeRecord>(api, '/api/v1/volumes', { limit: 1000 })) {
    const snapshots = await apiList<SnapshotRecord>(api, `/api/v1/volumes/${candidate.id}/snapshots`, { limit: 100 });
    const found = snapshots.find((snapshot) => snapshot.id === snapshotId);
    if (found) return found;
  }
  throw new CliError(`No snapshot ${snapshotId} on your volumes (one of a deleted volume needs --volume VOLUME_ID)`, {
    code: 'NOT_FOUND',
  });
}

async function list(_options: unknown, command: Command): Promise<void> {
  const api = apiOf(command);
  const volumes = await apiList<VolumeRecord>(api, '/api/v1/volumes', { limit: 1000 });
  if (globals(command).json) {
    printJson(volumes);
    return;
  }
  if (volumes.length === 0) {
    say('No volumes yet; create one with: container-hosting volumes create NAME --size GB');
    return;
  }
  const hostnames = await hostnamesOf(api, volumes);
  table(
    LIST_COLUMNS,
    volumes.map((volume) =>
      LIST_COLUMNS.map((column) =>
        column === 'attached_to' && volume.attached_to
          ? (hostnames.get(volume.attached_to) ?? volume.attached_to)
          : String(volume[column] ?? '-'),
      ),
    ),
  );
}

async function create(name: string, options: { size: number; fromSnapshot?: string }, command: Command): Promise<void> {
  const api = apiOf(command);
  const body = { name, size_gb: options.size, ...(options.fromSnapshot ? { from_snapshot: options.fromSnapshot } : {}) };
  const { data } = await apiCall<VolumeRecord>(api, 'POST', '/api/v1/volumes', { body });
  show(command, data, (volume) => details(volume, new Map()));
}

async function get(name: string, _options: unknown, command: Command): Promise<void> {
  const api = apiOf(command);
  const volume = await findVolume(api, name);
  if (globals(command).json) {
    printJson(volume);
    return;
  }
  details(volume, await hostnamesOf(api, [volume]));
}

const canAsk = () => Boolean(process.stdin.isTTY && process.stderr.isTTY);

async function remove(name: string, options: { yes?: boolean }, command: Command): Promise<void> {
  const api = apiOf(command);
  // Where nobody can answer (a script, a pipe) it refuses before any request rather than delete on a guess.
  if (!options.yes && !canAsk()) {
    throw new CliError(`volumes rm deletes ${name} and its content for good; with no terminal to ask, pass --yes to confirm`, {
      exitCode: EXIT.usage,
    });
  }
  const volume = await findVolume(api, name);
  if (!options.yes) {
    const prompt = createInterface({ input: process.stdin, output: process.stderr });
    try {
      const answer = await prompt.question(`Delete volume ${volume.name} and everything on it for good? [y/N] `);
      if (!/^y(es)?$/i.test(answer.trim())) throw new CliError(`Kept ${volume.name}`, { code: 'NOT_CONFIRMED', exitCode: EXIT.usage });
    } finally {
      prompt.close();
    }
  }
  const { data } = await apiCall<unknown>(api, 'DELETE', `/api/v1/volumes/${volume.id}`);
  show(command, data, () => out(`Deleted volume ${volume.name}`));
}

/** Takes a snapshot and, unless --no-wait, waits until it is ready or failed (a failed one exits 1). */
async function snapshot(name: string, options: { wait: boolean }, command: Command): Promise<void> {
  const api = apiOf(command);
  const volume = await findVolume(api, name);
  let current = (await apiCall<SnapshotRecord>(api, 'POST', `/api/v1/volumes/${volume.id}/snapshots`)).data;
  while (options.wait !== false && current.state === 'creating') {
    await sleep(SNAPSHOT_POLL_MS);
    const listed = await apiList<SnapshotRecord>(api, `/api/v1/volumes/${volume.id}/snapshots`, { limit: 100 });
    current = listed.find((candidate) => candidate.id === current.id) ?? current;
  }
  show(command, current, (taken) => snapshotRows([taken]));
  if (!globals(command).json && current.state === 'ready' && !current.consistent) {
    say(`${volume.name} was mounted by a running container: the copy may mix moments (stop the container for one that does not).`);
  }
  if (current.state === 'failed') throw new CliError(`The snapshot of ${volume.name} failed`, { code: 'SNAPSHOT_FAILED' });
}

async function snapshots(name: string, _options: unknown, command: Command): Promise<void> {
  const api = apiOf(command);
  const volume = await findVolume(api, name);
  const found = await apiList<SnapshotRecord>(api, `/api/v1/volumes/${volume.id}/snapshots`, { limit: 100 });
  show(command, found, (rows) => {
    if (rows.length) snapshotRows(rows);
    else say(`No snapshots of ${volume.name} yet`);
  });
}

/** A new volume with a snapshot's content, as large as the snapshot's volume unless --size says otherwise. */
async function restore(snapshotId: string, options: { name: string; size?: number; volume?: string }, command: Command): Promise<void> {
  const api = apiOf(command);
  const found = await findSnapshot(api, snapshotId, options.volume);
  const size =
    options.size ??
    (await apiCall<VolumeRecord>(api, 'GET', `/api/v1/volumes/${found.volume_id}`).then(
      ({ data }) => data.size_gb,
      () => {
        throw new CliError(`The snapshot's volume is gone; give the new volume's size with --size GB`, { exitCode: EXIT.usage });
      },
    ));
  const { data } = await apiCall<VolumeRecord>(api, 'POST', '/api/v1/volumes', {
    body: { name: options.name, size_gb: size, from_snapshot: found.id },
  });
  show(command, data, (volume) => details(volume, new Map()));
}

/**
 * Fetches a snapshot's gzipped tar into FILE (default `snapshot-<id>.tar.gz`), through a part
 * file renamed at the end, so an interrupted download never leaves a tar that looks whole.
 */
async function download(snapshotId: string, options: { output?: string; volume?: string }, command: Command): Promise<void> {
  const api = apiOf(command);
  const found = await findSnapshot(api, snapshotId, options.volume);
  const { data } = await apiCall<SnapshotDownloadRecord>(api, 'GET', `/api/v1/volumes/${found.volume_id}/snapshots/${found.id}/download`);
  // A presigned URL on AWS, another origin: no credential goes with it, the URL is the permission.
  const response = await fetch(new URL(data.url, api));
  if (!response.ok || !response.body) {
    throw new CliError(`The download was refused (${response.status}): ${(await response.text()).slice(0, 500)}`, {
      code: 'DOWNLOAD_REFUSED',
    });
  }
  const file = options.output ?? `snapshot-${found.id}.tar.gz`;
  const partial = `${file}.part`;
  let bytes = 0;
  const counted = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
  counted.on('data', (chunk: Buffer) => (bytes += chunk.length));
  try {
    await pipeline(counted, createWriteStream(partial, { mode: 0o600 }));
    await rename(partial, file);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
  show(command, { file, bytes, snapshot_id: found.id }, () => out(`Saved ${bytes} bytes to ${file}`));
}

const positiveInteger = (flag: string) => (value: string) => {
  const number = Number(value);
  if (!Number.isInteger(number) || number <= 0)
    throw new CliError(`${flag} must be a whole number of GB, got "${value}"`, { exitCode: EXIT.usage });
  return number;
};

/** Adds `volumes` and its subcommands to the program. */
export function addVolumeCommands(program: Command): void {
  const volumes = program.command('volumes').alias('volume').description('storage that outlives restarts, and its snapshots');
  volumes.command('ls').alias('list').description('list your volumes').action(list);
  volumes
    .command('create')
    .description('create a volume')
    .argument('<name>', '1 to 63 lowercase letters, digits or hyphens')
    .requiredOption('--size <GB>', 'its size in GB', positiveInteger('--size'))
    .option('--from-snapshot <id>', "start with a snapshot's content")
    .action(create);
  volumes.command('get').description('show one volume').argument('<volume>', 'name or id').action(get);
  volumes
    .command('rm')
    .alias('delete')
    .description('delete a volume and its content; only while no container mounts it; asks first on a terminal')
    .argument('<volume>', 'name or id')
    .option('-y, --yes', 'delete without asking (needed where there is no terminal to ask)')
    .action(remove);
  volumes
    .command('snapshot')
    .description("take a snapshot of a volume's content and wait until it is ready")
    .argument('<volume>', 'name or id')
    .option('--no-wait', 'do not wait for it to be ready')
    .action(snapshot);
  volumes.command('snapshots').description("list a volume's snapshots, newest first").argument('<volume>', 'name or id').action(snapshots);
  volumes
    .command('restore')
    .description("create a new volume with a snapshot's content")
    .argument('<snapshot>', 'snapshot id')
    .requiredOption('--name <name>', "the new volume's name")
    .option('--size <GB>', "its size in GB (default: the snapshot's volume's)", positiveInteger('--size'))
    .option('--volume <volume>', "the snapshot's volume (needed when it was deleted)")
    .action(restore);
  volumes
    .command('download')
    .description("save a snapshot's content as a gzipped tar")
    .argument('<snapshot>', 'snapshot id')
    .option('-o, --output <file>', 'where to write it (default snapshot-<id>.tar.gz)')
    .option('--volume <volume>', "the snapshot's volume (needed when it was deleted)")
    .action(download);
}
