import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SnapshotRef } from '../volumes/volume-backend.js';

/** Where the local stack serves a snapshot's gzipped tar: outside /api, as S3 is outside API Gateway on AWS. */
export const SNAPSHOT_DOWNLOAD_PATH = '/local/snapshots/';
/** How long a download URL is good for: as short as a presigned URL would be. */
const DOWNLOAD_URL_TTL_S = 15 * 60;

/**
 * The key download URLs are signed with: this process's own, never stored, so a URL dies with
 * the run that made it (as a presigned URL dies with its credentials).
 */
const signingKey = randomBytes(32);

const signatureOf = (backendRef: string, expires: number): string =>
  createHmac('sha256', signingKey).update(`${backendRef}\n${expires}`).digest('base64url');

/**
 * A URL for a snapshot's tar on the local stack, signed (HMAC-SHA-256 over its ref and expiry)
 * like a presigned URL: whoever holds it may download until it expires, and nothing else.
 */
export function signedSnapshotUrl(baseUrl: string, snapshot: SnapshotRef, now = Date.now()): { url: string; expiresAt: string } {
  const expires = Math.floor(now / 1000) + DOWNLOAD_URL_TTL_S;
  const url = new URL(`${SNAPSHOT_DOWNLOAD_PATH}${snapshot.backendRef}`, baseUrl);
  url.searchParams.set('expires', String(expires));
  url.searchParams.set('signature', signatureOf(snapshot.backendRef, expires));
  return { url: url.toString(), expiresAt: new Date(expires * 1000).toISOString() };
}

/**
 * Serves a signed snapshot URL: the file under `snapshotDir` its path names, if the signature
 * holds and has not expired; 403 otherwise, 404 for a file that is gone. Answers false for any
 * other path.
 */
export async function serveSnapshotDownload(
  request: IncomingMessage,
  response: ServerResponse,
  snapshotDir: string,
  now = Date.now(),
): Promise<boolean> {
  const url = new URL(request.url ?? '/', 'http://localhost');
  if (!url.pathname.startsWith(SNAPSHOT_DOWNLOAD_PATH)) return false;
  const backendRef = url.pathname.slice(SNAPSHOT_DOWNLOAD_PATH.length);
  const expires = Number(url.searchParams.get('expires'));
  const given = Buffer.from(url.searchParams.get('signature') ?? '');
  const wanted = Buffer.from(signatureOf(backendRef, expires));
  const valid =
    /^[0-9a-f-]{36}\/[0-9a-f-]{36}\.tar\.gz$/.test(backendRef) &&
    Number.isInteger(expires) &&
    expires * 1000 > now &&
    given.length === wanted.length &&
    timingSafeEqual(given, wanted);
  if (!valid) {
    response.writeHead(403, { 'Content-Type': 'text/plain' }).end('This download link is not valid or has expired; ask for a new one.\n');
    return true;
  }
  const path = `${snapshotDir}/${backendRef}`;
  const found = await stat(path).catch(() => undefined);
  if (!found) {
    response.writeHead(404, { 'Content-Type': 'text/plain' }).end('This snapshot no longer exists.\n');
    return true;
  }
  response.writeHead(200, {
    'Content-Type': 'application/gzip',
    'Content-Length': String(found.size),
    'Content-Disposition': `attachment; filename="${backendRef.split('/')[1]}"`,
  });
  createReadStream(path).pipe(response);
  return true;
}
