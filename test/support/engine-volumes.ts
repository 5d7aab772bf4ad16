import type Docker from 'dockerode';
import { VOLUME_LABEL } from '../../lib/local/docker-volumes.js';

/*
 * Volumes on the engine, for the files that mount them (test/engine/volumes.test.ts,
 * volume-survival.test.ts, npm-start-volumes.test.ts): the app that writes to one, and the
 * clean-up of what a file's stack left on the engine.
 */

// The header lines end in CRLF: Node's HTTP parser (the proxy's upstream) refuses bare LF.
const cgi = (name: string, body: string) =>
  `printf '#!/bin/sh\\nprintf "Content-Type: text/plain\\\\r\\\\n\\\\r\\\\n"\\n${body}\\n' > /tmp/www/cgi-bin/${name}`;

/** The notes an app keeps on the volume at /data: `write?text` appends a line, `read` answers them. */
export const NOTES_SCRIPTS = { write: 'echo "$QUERY_STRING" >> /data/notes; echo ok', read: 'cat /data/notes' };

/**
 * busybox httpd on $PORT with a CGI script at /cgi-bin/<name> for each of `scripts` (name to shell
 * body); `atStart` runs before it listens, and `traps` replace the prompt exit on SIGTERM.
 */
export function cgiApp(scripts: Record<string, string>, options: { atStart?: string[]; traps?: string[] } = {}): string[] {
  return [
    'sh',
    '-c',
    [
      'mkdir -p /tmp/www/cgi-bin',
      ...Object.entries(scripts).map(([name, body]) => cgi(name, body)),
      'chmod +x /tmp/www/cgi-bin/*',
      ...(options.atStart ?? []),
      ...(options.traps ?? ["trap 'exit 0' TERM"]),
      'httpd -f -p $PORT -h /tmp/www & wait',
    ].join('; '),
  ];
}

/** Removes the engine volumes of this file's stack (its LOCAL_CONTAINER_DIR names it), whatever a test left. */
export async function removeStackVolumes(engine: Docker): Promise<void> {
  const { stackIdOf } = await import('../../lib/wiring/local-containers.js');
  const volumes = await engine.listVolumes({
    filters: { label: [`${VOLUME_LABEL.stack}=${stackIdOf(process.env.LOCAL_CONTAINER_DIR!)}`] },
  });
  await Promise.all(
    (volumes.Volumes ?? []).map((volume) =>
      engine
        .getVolume(volume.Name)
        .remove({ force: true })
        .catch(() => undefined),
    ),
  );
}
