// Over 300 lines because the container page is one view whose parts (state, actions, settings, logs, charts)
// share the container's record and its polling.
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { api, ApiError, base, fieldErrors } from './api.js';
import { type ContainerRecord, type DeployRecord, type LogLine, type MetricsPoint, type ReleaseRecord, UPDATE_FIELDS } from './contract.js';
import { changesOf, type FormState, SchemaFields, savedMessage, shownPaths, stateOf } from './schema-form.js';
import { html, isAsleep, Link, navigate, StateBadge } from './ui.js';
import { useVolumeChoices } from './volume-choices.js';

/** How often the page asks again: quickly while something is changing, slowly when settled. */
const BUSY_POLL_MS = 1500;
const SETTLED_POLL_MS = 5000;
/**
 * Logs and charts read CloudWatch on AWS, within account-wide quotas and billed per metric:
 * docs/api.md "What reading costs" does the arithmetic behind these two intervals.
 */
const LOG_POLL_MS = 3000;
/** The points are per minute, and the service fetches them at most once a minute. */
const CHART_POLL_MS = 60_000;
const CHART_FIRST_POINTS_POLL_MS = 5000;
const MAX_LOG_LINES = 1000;

/** A time series chart (uPlot) with its latest value in words beside it, so it reads without the picture. */
/** `points` is null until the first answer: the caption says it is loading, not that there are none. */
function Chart(props: { id: string; title: string; unit: string; points: MetricsPoint[] | null; value: (point: MetricsPoint) => number }) {
  const holder = useRef<HTMLDivElement>(null);
  const chart = useRef<uPlot | null>(null);
  const figure = useRef<HTMLElement>(null);
  useEffect(() => {
    if (!holder.current) return;
    chart.current = new uPlot(
      {
        width: Math.max(280, holder.current.clientWidth || 420),
        height: 180,
        // The last hour, whatever points there are (one point alone would otherwise span years).
        scales: { x: { time: true, range: () => [Date.now() / 1000 - 3600, Date.now() / 1000] } },
        axes: [{}, { label: props.unit, size: 56 }],
        series: [{}, { label: props.title, stroke: '#2f6ae0', width: 2, fill: 'rgba(47,106,224,.08)', points: { show: true, size: 5 } }],
        hooks: {
          draw: [
            (plot: uPlot) => {
              const drawn = plot.data[1]?.length ?? 0;
              figure.current?.setAttribute('data-points', String(drawn));
              if (drawn > 0 && !figure.current?.hasAttribute('data-first-drawn-ms')) {
                figure.current?.setAttribute('data-first-drawn-ms', String(Math.round(performance.now())));
              }
            },
          ],
        },
      },
      [[], []],
      holder.current,
    );
    return () => chart.current?.destroy();
  }, []);
  const points = props.points ?? [];
  useEffect(() => {
    chart.current?.setData([points.map((point) => Date.parse(point.timestamp) / 1000), points.map(props.value)]);
  }, [props.points]);
  const latest = points[points.length - 1];
  const caption =
    props.points === null
      ? 'Loading…'
      : latest
        ? `${props.value(latest)} ${props.unit} at ${new Date(latest.timestamp).toLocaleTimeString()}`
        : 'no samples yet';
  return html`<figure class="chart" id=${props.id} ref=${figure} data-points="0">
    <figcaption><strong>${props.title}</strong>${' (last hour, per minute): '}<span class="latest">${caption}</span>
    </figcaption>
    <div ref=${holder} role="img" aria-label=${`${props.title} chart, ${points.length} points`}></div>
  </figure>`;
}

function Charts(props: { containerId: string }) {
  const [points, setPoints] = useState<MetricsPoint[] | null>(null);
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      let drawn = false;
      try {
        const history = await api<MetricsPoint[]>('GET', `/api/v1/containers/${props.containerId}/metrics/history?minutes=60`);
        if (live) setPoints(history);
        drawn = history.length > 0;
      } catch {
        // The next round tries again.
      }
      // A new container has no minute yet: ask sooner until its first one is there.
      if (live) timer = setTimeout(load, drawn ? CHART_POLL_MS : CHART_FIRST_POINTS_POLL_MS);
    };
    void load();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [props.containerId]);
  return html`<section aria-labelledby="metrics-heading" class="charts">
    <h2 id="metrics-heading">Metrics</h2>
    <div class="chart-row">
      <${Chart} id="cpu-chart" title="CPU" unit="%" points=${points} value=${(point: MetricsPoint) => point.cpu_percent} />
      <${Chart} id="memory-chart" title="Memory" unit="MB" points=${points} value=${(point: MetricsPoint) => point.memory_used_mb} />
    </div>
  </section>`;
}

/** Follows the container's output by asking for the lines at or after the newest one seen. */
function Logs(props: { containerId: string }) {
  /** null until the first page answers: "Loading…", not "No lines yet". */
  const [lines, setLines] = useState<LogLine[] | null>(null);
  const [paused, setPaused] = useState(false);
  const state = useRef<{ since?: string; seenAtSince: Set<string> }>({ seenAtSince: new Set() });
  useEffect(() => {
    if (paused) return;
    let live = true;
    const poll = async () => {
      const since = state.current.since;
      const query = since ? `since=${encodeURIComponent(since)}&limit=1000` : 'limit=200';
      try {
        const page = await api<LogLine[]>('GET', `/api/v1/containers/${props.containerId}/logs?${query}`);
        if (!live) return;
        const key = (line: LogLine) => `${line.timestamp}|${line.stream}|${line.message}`;
        // `since` is inclusive: lines at that very instant were seen already.
        const fresh = page.filter((line) => !(line.timestamp === since && state.current.seenAtSince.has(key(line))));
        if (page.length > 0) {
          const newest = page[page.length - 1]!.timestamp;
          const atNewest = page.filter((line) => line.timestamp === newest).map(key);
          state.current = {
            since: newest,
            seenAtSince: newest === since ? new Set([...state.current.seenAtSince, ...atNewest]) : new Set(atNewest),
          };
        }
        setLines((previous) => (fresh.length > 0 || previous === null ? [...(previous ?? []), ...fresh].slice(-MAX_LOG_LINES) : previous));
      } catch {
        // The next round tries again.
      }
    };
    void poll();
    const timer = setInterval(poll, LOG_POLL_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [props.containerId, paused]);

  const panel = useRef<HTMLDivElement>(null);
  useEffect(() => {
    // Following: the newest line stays in view unless paused.
    if (paused) return;
    for (const pre of panel.current?.querySelectorAll('pre') ?? []) pre.scrollTop = pre.scrollHeight;
  }, [lines, paused]);
  const stream = (name: 'stdout' | 'stderr') => {
    const ofStream = (lines ?? []).filter((line) => line.stream === name);
    return html`<div class="log-stream">
      <h3 id=${`${name}-heading`}>${name}</h3>
      <pre id=${`logs-${name}`} tabindex="0" aria-labelledby=${`${name}-heading`}>${lines === null ? html`<span class="muted">Loading…</span>` : ofStream.length === 0 ? html`<span class="muted">No lines yet</span>` : ofStream.map((line) => html`<span class="line"><span class="time">${new Date(line.timestamp).toLocaleTimeString()}</span> ${line.message}</span>`)}</pre>
    </div>`;
  };
  return html`<section aria-labelledby="logs-heading" class="logs">
    <h2 id="logs-heading">Logs</h2>
    <button type="button" class="secondary" aria-pressed=${paused ? 'true' : 'false'} onClick=${() => setPaused(!paused)}>${paused ? 'Resume' : 'Pause'}</button>
    <span class="muted" role="status">${paused ? 'Paused' : 'Following new lines'}</span>
    <div class="log-streams" ref=${panel}>${stream('stdout')}${stream('stderr')}</div>
  </section>`;
}

/** A deploy's build output, read when its row is opened (and again while it builds). */
function DeployLogs(props: { containerId: string; deploy: DeployRecord }) {
  const [lines, setLines] = useState<LogLine[] | null>(null);
  const building = props.deploy.state === 'building' || props.deploy.state === 'waiting_for_upload';
  useEffect(() => {
    let live = true;
    const read = async () => {
      try {
        const page = await api<LogLine[]>('GET', `/api/v1/containers/${props.containerId}/deploys/${props.deploy.id}/logs?limit=1000`);
        if (live) setLines(page);
      } catch {
        // The next round tries again.
      }
    };
    void read();
    const timer = building ? setInterval(read, LOG_POLL_MS) : undefined;
    return () => {
      live = false;
      if (timer) clearInterval(timer);
    };
  }, [props.containerId, props.deploy.id, building]);
  return html`<pre class="deploy-logs" tabindex="0">${lines === null ? html`<span class="muted">Loading…</span>` : lines.length === 0 ? html`<span class="muted">No lines yet</span>` : lines.map((line) => html`<span class="line">${line.message}</span>`)}</pre>`;
}

/** The container's deploys (each with its build logs) and its releases, each with a Rollback button. */
function Releases(props: { container: ContainerRecord; onRolledBack: () => void }) {
  const [releases, setReleases] = useState<ReleaseRecord[]>([]);
  const [deploys, setDeploys] = useState<DeployRecord[]>([]);
  const [problem, setProblem] = useState('');
  const [rolling, setRolling] = useState<number | null>(null);
  const { id, release } = props.container;
  useEffect(() => {
    let live = true;
    const read = async () => {
      try {
        const [found, made] = await Promise.all([
          api<ReleaseRecord[]>('GET', `/api/v1/containers/${id}/releases?limit=20`),
          api<DeployRecord[]>('GET', `/api/v1/containers/${id}/deploys?limit=10`),
        ]);
        if (!live) return;
        setReleases(found);
        setDeploys(made);
      } catch {
        // The next round tries again.
      }
    };
    void read();
    const timer = setInterval(read, SETTLED_POLL_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [id, release]);
  const rollback = async (version: number) => {
    if (!confirm(`Roll back to release ${version}? A new release runs its workload, swapped in without downtime.`)) return;
    setRolling(version);
    setProblem('');
    try {
      await api('POST', `/api/v1/containers/${id}/releases/${version}/rollback`);
      props.onRolledBack();
    } catch (error) {
      setProblem(error instanceof Error ? error.message : 'Rollback failed');
    } finally {
      setRolling(null);
    }
  };
  return html`<section aria-labelledby="deploys-heading" class="releases">
    <h2 id="deploys-heading">Deploys</h2>
    ${deploys.length === 0 ? html`<p class="muted">No deploys yet: <code>container-hosting deploy DIR --container ${props.container.hostname}</code></p>` : null}
    ${deploys.map(
      (deploy) => html`<details class="deploy" id=${`deploy-${deploy.id}`}>
        <summary><span class="deploy-state">${deploy.state}</span> ${deploy.created_at}${deploy.release ? ` → release ${deploy.release}` : ''}${deploy.state_reason ? html` <span class="muted">(${deploy.state_reason})</span>` : null}</summary>
        <${DeployLogs} containerId=${id} deploy=${deploy} />
      </details>`,
    )}
    <h2 id="releases-heading">Releases</h2>
    ${problem ? html`<p class="error" role="alert">${problem}</p>` : null}
    <table aria-labelledby="releases-heading">
      <thead><tr><th>Version</th><th>Cause</th><th>Image</th><th>Created</th><th></th></tr></thead>
      <tbody>${releases.map(
        (one) => html`<tr id=${`release-${one.version}`}>
          <td>v${one.version}${one.version === release ? ' (running)' : ''}</td>
          <td>${one.cause}</td>
          <td>${one.workload.image}${one.image_available === false ? ' (image pruned)' : ''}</td>
          <td>${one.created_at}</td>
          <td>${one.version === release ? null : html`<button type="button" class="secondary" disabled=${rolling !== null || one.image_available === false} onClick=${() => rollback(one.version)}>${rolling === one.version ? 'Rolling back…' : 'Rollback'}</button>`}</td>
        </tr>`,
      )}</tbody>
    </table>
  </section>`;
}

/** The settings form, drawn from the PATCH body's fields and filled from the record; only changed fields are sent. */
function Settings(props: { container: ContainerRecord; onSaved: (record: ContainerRecord) => void }) {
  const record = props.container as unknown as Record<string, unknown>;
  const [state, setState] = useState<FormState>(stateOf(UPDATE_FIELDS, record));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [saved, setSaved] = useState('');
  const choices = useVolumeChoices(props.container.id);

  const submit = async (event: Event) => {
    event.preventDefault();
    const changes = changesOf(UPDATE_FIELDS, state, record);
    if (Object.keys(changes).length === 0) {
      setSaved('Nothing changed.');
      return;
    }
    try {
      const updated = await api<ContainerRecord>('PATCH', `/api/v1/containers/${props.container.id}`, changes);
      setErrors({});
      setSaved(savedMessage(UPDATE_FIELDS, Object.keys(changes)));
      props.onSaved(updated);
    } catch (error) {
      setSaved('');
      setErrors(fieldErrors(error, shownPaths(UPDATE_FIELDS)));
    }
  };

  return html`<form class="settings" onSubmit=${submit} novalidate aria-labelledby="settings-heading">
    <h2 id="settings-heading">Settings</h2>
    ${errors.form ? html`<p class="error" role="alert">${errors.form}</p>` : null}
    <${SchemaFields} form="settings" fields=${UPDATE_FIELDS} state=${state} onChange=${setState} errors=${errors} choices=${choices} />
    <button type="submit">Save settings</button>
    <span role="status" class="notice">${saved}</span>
  </form>`;
}

/**
 * The actions that do something in each state (the transition table, lib/containers/transitions.ts):
 * a start of a running container changes nothing (a restart takes a changed workload), one still
 * starting only waits; a stop of a stopped or failed one only records what is so. A sleeping
 * container is stopped: Start wakes it.
 */
const APPLIES_IN: Record<ContainerRecord['state'], readonly string[]> = {
  provisioning: ['stop', 'restart'],
  running: ['stop', 'restart'],
  stopped: ['start'],
  failed: ['start'],
};

/** One container: its state (followed while it changes), actions, settings, logs and charts. */
export function ContainerPage(props: { id: string }) {
  const [container, setContainer] = useState<ContainerRecord | null>(null);
  const [missing, setMissing] = useState(false);
  const [action, setAction] = useState('');
  const [problem, setProblem] = useState('');

  const load = async () => {
    try {
      setContainer(await api<ContainerRecord>('GET', `/api/v1/containers/${props.id}`));
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) setMissing(true);
    }
  };
  const busy = action !== '' || container?.state === 'provisioning';
  useEffect(() => {
    void load();
    const timer = setInterval(load, busy ? BUSY_POLL_MS : SETTLED_POLL_MS);
    return () => clearInterval(timer);
  }, [props.id, busy]);

  if (missing)
    return html`<section><h1>Container not found</h1><p><${Link} href=${`${base()}/console/containers`}>Back to containers<//></p></section>`;
  if (!container) return html`<p>Loading…</p>`;

  const act = async (name: string, label: string) => {
    setAction(label);
    setProblem('');
    try {
      await api('POST', `/api/v1/containers/${container.id}/${name}`);
    } catch (error) {
      setProblem(error instanceof Error ? error.message : `${label} failed`);
    } finally {
      setAction('');
      void load();
    }
  };
  const remove = async () => {
    if (!confirm(`Delete ${container.hostname}? Its task stops and the hostname is freed.`)) return;
    setAction('Deleting');
    try {
      await api('DELETE', `/api/v1/containers/${container.id}`);
      navigate(`${base()}/console/containers`);
    } catch (error) {
      setProblem(error instanceof Error ? error.message : 'Delete failed');
      setAction('');
    }
  };

  return html`<section aria-labelledby="container-heading">
    <p><${Link} href=${`${base()}/console/containers`}>← Containers<//></p>
    <h1 id="container-heading">${container.hostname}</h1>
    <dl class="facts">
      <dt>State</dt><dd id="state" role="status" aria-live="polite"><${StateBadge} container=${container} />${isAsleep(container) ? html` <span id="asleep">wakes on its next request</span>` : null}${container.last_wake_ms !== null && container.last_wake_ms !== undefined ? html` <span class="muted" id="last-wake">(last wake ${container.last_wake_ms} ms)</span>` : null}${action ? html` <span class="muted">(${action}…)</span>` : null}</dd>
      ${container.state_reason ? html`<dt>Reason</dt><dd id="state-reason">${container.state_reason}</dd>` : null}
      ${container.restart_count !== undefined ? html`<dt>Restarts</dt><dd>${container.restart_count}</dd>` : null}
      <dt>URL</dt><dd>${container.url ? html`<a id="container-url" href=${container.url} target="_blank" rel="noopener noreferrer">${container.url}</a>` : '—'}</dd>
      <dt>Image</dt><dd>${container.image}</dd>
    </dl>
    <div class="actions">
      <button type="button" disabled=${action !== '' || !APPLIES_IN[container.state].includes('start')} onClick=${() => act('start', 'Starting')}>Start</button>
      <button type="button" disabled=${action !== '' || !APPLIES_IN[container.state].includes('stop')} onClick=${() => act('stop', 'Stopping')}>Stop</button>
      <button type="button" disabled=${action !== '' || !APPLIES_IN[container.state].includes('restart')} onClick=${() => act('restart', 'Restarting')}>Restart</button>
      <button type="button" class="danger" disabled=${action !== ''} onClick=${remove}>Delete</button>
    </div>
    ${problem ? html`<p class="error" role="alert">${problem}</p>` : null}
    <${Charts} containerId=${container.id} />
    <${Logs} containerId=${container.id} />
    <${Releases} container=${container} onRolledBack=${load} />
    <${Settings} container=${container} onSaved=${setContainer} />
  </section>`;
}
