import { useEffect, useState } from 'preact/hooks';
import { api, base, fieldErrors } from './api.js';
import type { ContainerRecord, SnapshotDownloadRecord, SnapshotRecord, VolumeRecord } from './contract.js';
import { Field, html, Link, when } from './ui.js';

/**
 * Volumes and their snapshots (docs/volumes.md, "Volumes"): the list with the container that
 * mounts each, create, delete (the API's refusal shown as it says it), and per volume its
 * snapshots: take, list, restore into a new volume, download.
 */

/** A creating snapshot is asked about again this often while the panel is open. */
const SNAPSHOT_POLL_MS = 2000;
const VOLUMES_POLL_MS = 5000;

const sizeOf = (bytes: number): string =>
  bytes < 1024 ? `${bytes} B` : bytes < 1024 ** 2 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 ** 2).toFixed(1)} MiB`;

/** Asks for a snapshot's download URL and lets the browser fetch it (a presigned URL on AWS: no cookie goes with it). */
async function download(snapshot: SnapshotRecord): Promise<void> {
  const { url } = await api<SnapshotDownloadRecord>('GET', `/api/v1/volumes/${snapshot.volume_id}/snapshots/${snapshot.id}/download`);
  const link = document.createElement('a');
  link.href = url;
  link.download = `snapshot-${snapshot.id}.tar.gz`;
  link.rel = 'noopener';
  document.body.append(link);
  link.click();
  link.remove();
}

/** One volume's snapshots: take one, and restore or download each that is ready. */
function Snapshots(props: { volume: VolumeRecord; onRestored: (volume: VolumeRecord) => void }) {
  const { volume } = props;
  const [snapshots, setSnapshots] = useState<SnapshotRecord[] | null>(null);
  const [problem, setProblem] = useState('');
  const [restoring, setRestoring] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});

  const load = async () => {
    try {
      setSnapshots(await api<SnapshotRecord[]>('GET', `/api/v1/volumes/${volume.id}/snapshots?limit=100`));
    } catch (error) {
      setProblem(error instanceof Error ? error.message : 'The snapshots could not be loaded');
    }
  };
  const creating = snapshots?.some((snapshot) => snapshot.state === 'creating') ?? false;
  useEffect(() => {
    void load();
    if (!creating) return;
    const timer = setInterval(load, SNAPSHOT_POLL_MS);
    return () => clearInterval(timer);
  }, [volume.id, creating]);

  const take = async () => {
    setProblem('');
    try {
      await api<SnapshotRecord>('POST', `/api/v1/volumes/${volume.id}/snapshots`);
    } catch (error) {
      setProblem(error instanceof Error ? error.message : 'The snapshot could not be taken');
    }
    void load();
  };
  const restore = async (event: Event) => {
    event.preventDefault();
    try {
      const created = await api<VolumeRecord>('POST', '/api/v1/volumes', { name, size_gb: volume.size_gb, from_snapshot: restoring });
      setRestoring(null);
      setName('');
      setErrors({});
      props.onRestored(created);
    } catch (error) {
      setErrors(fieldErrors(error));
    }
  };
  const fetchFile = async (snapshot: SnapshotRecord) => {
    setProblem('');
    await download(snapshot).catch((error: unknown) => setProblem(error instanceof Error ? error.message : 'The download failed'));
  };

  const headingId = `snapshots-heading-${volume.id}`;
  return html`<section class="snapshots" id="snapshots" aria-labelledby=${headingId}>
    <h2 id=${headingId}>Snapshots of ${volume.name}</h2>
    <p class="muted">A snapshot taken while a running container mounts the volume may mix moments, and says so; stop the container for one that does not.</p>
    <button type="button" onClick=${take}>Take a snapshot</button>
    ${problem ? html`<p class="error" role="alert">${problem}</p>` : null}
    ${
      snapshots === null
        ? html`<p>Loading…</p>`
        : snapshots.length === 0
          ? html`<p id="no-snapshots">No snapshots yet.</p>`
          : html`<table id="snapshot-list">
              <thead><tr><th scope="col">Taken</th><th scope="col">State</th><th scope="col">Size</th><th scope="col">One moment</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
              <tbody>${snapshots.map(
                (snapshot) => html`<tr data-id=${snapshot.id} data-state=${snapshot.state}>
                  <td>${when(snapshot.created_at)}</td>
                  <td>${snapshot.state}${snapshot.state_reason ? html` <span class="muted state-reason">(${snapshot.state_reason})</span>` : null}</td>
                  <td>${snapshot.state === 'ready' ? sizeOf(snapshot.size_bytes) : '—'}</td>
                  <td>${snapshot.consistent ? 'yes' : 'no: taken while running'}</td>
                  <td>${
                    snapshot.state === 'ready'
                      ? html`<button type="button" class="secondary" onClick=${() => setRestoring(snapshot.id)}>Restore…</button>
                        <button type="button" class="secondary" onClick=${() => fetchFile(snapshot)}>Download</button>`
                      : null
                  }</td>
                </tr>`,
              )}</tbody>
            </table>`
    }
    ${
      restoring
        ? html`<form id="restore-form" onSubmit=${restore} novalidate aria-label="Restore into a new volume">
            <p>Restore into a new volume of ${volume.size_gb} GB with this snapshot's content.</p>
            ${errors.form ? html`<p class="error" role="alert">${errors.form}</p>` : null}
            <${Field} id="restore-name" label="Name of the new volume" value=${name} onInput=${setName} error=${errors.name} required />
            <button type="submit">Restore</button>
            <button type="button" class="secondary" onClick=${() => setRestoring(null)}>Cancel</button>
          </form>`
        : null
    }
  </section>`;
}

export function VolumesPage() {
  const [volumes, setVolumes] = useState<VolumeRecord[] | null>(null);
  const [hostnames, setHostnames] = useState<Map<string, string>>(new Map());
  const [problem, setProblem] = useState('');
  const [notice, setNotice] = useState('');
  const [open, setOpen] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [size, setSize] = useState('1');
  const [errors, setErrors] = useState<Record<string, string>>({});

  const load = async () => {
    try {
      const [found, containers] = await Promise.all([
        api<VolumeRecord[]>('GET', '/api/v1/volumes?limit=1000'),
        api<ContainerRecord[]>('GET', '/api/v1/containers?limit=1000'),
      ]);
      setVolumes(found);
      setHostnames(new Map(containers.map((container) => [container.id, container.hostname])));
    } catch (error) {
      setProblem(error instanceof Error ? error.message : 'The list could not be loaded');
    }
  };
  useEffect(() => {
    void load();
    const timer = setInterval(load, VOLUMES_POLL_MS);
    return () => clearInterval(timer);
  }, []);

  const create = async (event: Event) => {
    event.preventDefault();
    try {
      const created = await api<VolumeRecord>('POST', '/api/v1/volumes', { name, size_gb: Number(size) });
      setName('');
      setErrors({});
      setNotice(`Created ${created.name}.`);
      void load();
    } catch (error) {
      setErrors(fieldErrors(error));
    }
  };
  const remove = async (volume: VolumeRecord) => {
    if (!confirm(`Delete the volume ${volume.name} and everything on it for good?`)) return;
    setProblem('');
    try {
      await api('DELETE', `/api/v1/volumes/${volume.id}`);
      setNotice(`Deleted ${volume.name}.`);
      if (open === volume.id) setOpen(null);
    } catch (error) {
      // The API's own words: a 409 names the container that mounts it and what to do.
      setProblem(`${volume.name} was not deleted: ${error instanceof Error ? error.message : 'the delete failed'}`);
    }
    void load();
  };

  const opened = volumes?.find((volume) => volume.id === open);
  return html`<section aria-labelledby="volumes-heading">
    <h1 id="volumes-heading">Volumes</h1>
    <p class="muted">Storage that outlives restarts, sleeps and deploys of the container that mounts it, and the container too. Mount one from a container's settings.</p>
    ${problem ? html`<p class="error" role="alert" id="volumes-problem">${problem}</p>` : null}
    <p role="status" class="notice">${notice}</p>
    ${
      volumes === null
        ? html`<p>Loading…</p>`
        : volumes.length === 0
          ? html`<p id="no-volumes">No volumes yet. Create one below.</p>`
          : html`<table id="volumes">
              <thead><tr><th scope="col">Name</th><th scope="col">Size</th><th scope="col">Used</th><th scope="col">Attached to</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
              <tbody>${volumes.map(
                (volume) => html`<tr data-name=${volume.name}>
                  <td>${volume.name}</td>
                  <td>${volume.size_gb} GB</td>
                  <td>${volume.used_gb} GB</td>
                  <td class="attached">${
                    volume.attached_to
                      ? html`<${Link} href=${`${base()}/console/containers/${volume.attached_to}`}>${hostnames.get(volume.attached_to) ?? volume.attached_to}<//>`
                      : '—'
                  }</td>
                  <td>${when(volume.created_at)}</td>
                  <td>
                    <button type="button" class="secondary" aria-expanded=${open === volume.id} onClick=${() => setOpen(open === volume.id ? null : volume.id)} aria-label=${`Snapshots of ${volume.name}`}>Snapshots</button>
                    <button type="button" class="danger" aria-label=${`Delete volume ${volume.name}`} onClick=${() => remove(volume)}>Delete</button>
                  </td>
                </tr>`,
              )}</tbody>
            </table>`
    }
    ${
      opened
        ? html`<${Snapshots}
            key=${opened.id}
            volume=${opened}
            onRestored=${(created: VolumeRecord) => {
              setNotice(`Restored into ${created.name}.`);
              void load();
            }}
          />`
        : null
    }
    <form onSubmit=${create} novalidate aria-labelledby="new-volume-heading">
      <h2 id="new-volume-heading">Create a volume</h2>
      ${errors.form ? html`<p class="error" role="alert">${errors.form}</p>` : null}
      <div class="grid">
        <${Field} id="volume-name" label="Name" value=${name} onInput=${setName} error=${errors.name} required hint="1 to 63 lowercase letters, digits or hyphens" />
        <${Field} id="volume-size" label="Size (GB)" type="number" value=${size} onInput=${setSize} error=${errors.size_gb} required />
      </div>
      <button type="submit">Create volume</button>
    </form>
  </section>`;
}
