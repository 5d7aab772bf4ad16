import { ConflictError, ForbiddenError, QuotaExceededError } from '../errors.js';
import { escapeHtml } from './reply.js';

/**
 * What a proxy answers on a container's behalf when the app itself cannot (docs/routing.md,
 * "Sleep and wake"): the local proxy (lib/local/app-proxy.ts) and the wake endpoint on AWS
 * (lib/aws/wake-endpoint.ts) answer the same pages.
 */
export interface AppAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A short HTML page, never cached. */
export function appPage(status: number, title: string, detail: string, head = ''): AppAnswer {
  return {
    status,
    headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' },
    body:
      `<!doctype html><html lang="en"><head><meta charset="utf-8">${head}<title>${escapeHtml(title)}</title></head>` +
      `<body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(detail)}</p></body></html>\n`,
  };
}

/** How often the starting page reloads itself, and when other clients are told to ask again. */
export const STARTING_RETRY_SECONDS = 2;

/** Past the wake budget: a browser (Accept has text/html) gets a page that reloads itself until the app answers, other clients 503 with Retry-After. */
export function startingAnswer(accept: string | undefined, hostname: string): AppAnswer {
  if (!String(accept ?? '').includes('text/html')) {
    return {
      status: 503,
      headers: {
        'retry-after': String(STARTING_RETRY_SECONDS),
        'content-type': 'text/plain; charset=utf-8',
        'cache-control': 'no-store',
      },
      body: `${hostname} is starting; ask again in ${STARTING_RETRY_SECONDS} s\n`,
    };
  }
  const page = appPage(
    503,
    `${hostname} is starting`,
    'It was asleep and is waking up; this page reloads itself until it answers.',
    `<meta http-equiv="refresh" content="${STARTING_RETRY_SECONDS}">`,
  );
  return { ...page, headers: { ...page.headers, 'retry-after': String(STARTING_RETRY_SECONDS) } };
}

/** Why a wake by request was refused, as its 503 page says it. */
export interface WakeRefusal {
  title: string;
  detail: string;
}

/** A wake's failure as its page says it; `error` is what SleepingContainerService.wake threw. */
export function wakeRefusalOf(error: unknown, hostname: string): WakeRefusal {
  if (error instanceof QuotaExceededError)
    return { title: `${hostname} cannot wake`, detail: `Its owner is at their quota: ${error.message}` };
  if (error instanceof ForbiddenError) return { title: `${hostname} cannot wake`, detail: error.message };
  if (error instanceof ConflictError) {
    return { title: `${hostname} did not wake`, detail: 'It was stopped or changed meanwhile; start it through the API.' };
  }
  return { title: `${hostname} did not wake`, detail: error instanceof Error ? error.message : 'it did not start' };
}

/** A refused wake's answer: 503 with Retry-After and its page. */
export function refusedAnswer(refusal: WakeRefusal, retryAfterSeconds: number): AppAnswer {
  const page = appPage(503, refusal.title, refusal.detail);
  return { ...page, headers: { ...page.headers, 'retry-after': String(retryAfterSeconds) } };
}

/** RFC 9110 section 7.6.1: connection-specific fields a proxy (the local one, the wake endpoint) must not forward. */
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'upgrade',
]);
