import { type SpawnOptions, spawn } from 'node:child_process';

/**
 * Opening a URL in the person's browser, with no shell between (issue 25, item 6): the URL is
 * one argument of a program run directly, never a command line a shell would read, so `&`, `|`
 * or `"` in a URL the server chose run nothing.
 */

/** The program and arguments that open `url` on a platform. */
export function browserCommandFor(platform: NodeJS.Platform, url: string): [string, string[]] {
  switch (platform) {
    case 'darwin':
      return ['open', [url]];
    // url.dll's FileProtocolHandler opens a URL in the default browser, without cmd.exe and its `start` parsing.
    case 'win32':
      return ['rundll32', ['url.dll,FileProtocolHandler', url]];
    default:
      return ['xdg-open', [url]];
  }
}

/**
 * A URL the CLI may open: http or https only, and, when `origin` is given, on that origin (the
 * device page the API named must be the API's own). Answers the URL as the WHATWG parser writes
 * it (spaces and quotes escaped), or undefined.
 */
export function openableUrl(candidate: string, origin?: string): string | undefined {
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  if (origin !== undefined && url.origin !== origin) return undefined;
  return url.href;
}

type Spawn = (
  command: string,
  args: string[],
  options: SpawnOptions,
) => { on(event: 'error', listener: () => void): unknown; unref(): void };

/** Opens a URL in the desktop's browser when there is one; says whether it tried. */
export function openBrowser(
  candidate: string,
  {
    origin,
    platform = process.platform,
    env = process.env,
    run = spawn as Spawn,
  }: { origin?: string; platform?: NodeJS.Platform; env?: NodeJS.ProcessEnv; run?: Spawn } = {},
): boolean {
  const url = openableUrl(candidate, origin);
  if (!url) return false;
  const hasDesktop = platform === 'darwin' || platform === 'win32' || Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
  if (!hasDesktop) return false;
  const [command, args] = browserCommandFor(platform, url);
  try {
    const child = run(command, args, { stdio: 'ignore', detached: true, shell: false, windowsHide: true });
    child.on('error', () => {});
    child.unref();
    return true;
  } catch {
    return false;
  }
}
