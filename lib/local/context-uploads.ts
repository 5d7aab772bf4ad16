import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ContextUploads, DeployRef, UploadTarget } from '../deploys/builds.js';
import { BadRequestError, ConflictError, ForbiddenError, type HttpError, NotFoundError, PayloadTooLargeError } from '../errors.js';

/** Where the local server takes build contexts: `PUT /uploads/deploys/{deploy_id}?…` (on AWS, a presigned S3 PUT). */
export const UPLOAD_PATH_PREFIX = '/uploads/deploys/';

const ID = /^[0-9a-f-]{36}$/;

/** What the upload endpoint tells its caller about an upload. */
export type UploadReceipt =
  | { kind: 'received'; ref: DeployRef }
  | { kind: 'expired'; ref: DeployRef }
  | { kind: 'refused'; error: HttpError };

/**
 * The local stand-in for a presigned S3 PUT: a URL signed with a key of this process (HMAC-SHA256
 * over the deploy, the exact size and the expiry), accepted once (the file is created exclusively),
 * until it expires, for exactly the size signed. The context lands in `dir/<deploy id>.tar.gz`,
 * where the local builder reads it.
 */
export class LocalContextUploads implements ContextUploads {
  private readonly key = randomBytes(32);

  constructor(
    private readonly options: {
      dir: string;
      baseUrl: () => string;
      ttlS: number;
      now?: () => number;
      /** Told of each upload target issued: what the build will need can be made while the client uploads. */
      onIssued?: (deploy: DeployRef) => void;
    },
  ) {}

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  /** The file a deploy's context is stored in once uploaded. */
  pathOf(ref: DeployRef): string {
    return join(this.options.dir, `${ref.deployId}.tar.gz`);
  }

  async targetFor(deploy: DeployRef, sizeBytes: number): Promise<UploadTarget> {
    this.options.onIssued?.(deploy);
    const expires = Math.floor(this.now() / 1000) + this.options.ttlS;
    const url = new URL(`${UPLOAD_PATH_PREFIX}${deploy.deployId}`, this.options.baseUrl());
    url.searchParams.set('account', deploy.accountId);
    url.searchParams.set('container', deploy.containerId);
    url.searchParams.set('size', String(sizeBytes));
    url.searchParams.set('expires', String(expires));
    url.searchParams.set('signature', this.signature(deploy, sizeBytes, expires));
    return {
      url: url.toString(),
      method: 'PUT',
      headers: { 'Content-Type': 'application/gzip', 'Content-Length': String(sizeBytes) },
      expiresAt: new Date(expires * 1000).toISOString(),
    };
  }

  async discard(deploy: DeployRef): Promise<void> {
    await rm(this.pathOf(deploy), { force: true });
  }

  private signature(ref: DeployRef, sizeBytes: number, expires: number): string {
    return createHmac('sha256', this.key)
      .update(`${ref.accountId}\n${ref.containerId}\n${ref.deployId}\n${sizeBytes}\n${expires}`)
      .digest('base64url');
  }

  /**
   * Takes one upload: checks the signature, the expiry, the method and the declared size before
   * reading a byte, then stores the body, refusing it as soon as it passes the signed size.
   */
  async receive(request: IncomingMessage, rawPath: string, rawQuery: string): Promise<UploadReceipt> {
    const deployId = rawPath.slice(UPLOAD_PATH_PREFIX.length);
    const query = new URLSearchParams(rawQuery);
    const accountId = query.get('account') ?? '';
    const containerId = query.get('container') ?? '';
    const size = Number(query.get('size'));
    const expires = Number(query.get('expires'));
    const given = Buffer.from(query.get('signature') ?? '');
    if (
      !ID.test(deployId) ||
      !ID.test(accountId) ||
      !ID.test(containerId) ||
      !Number.isSafeInteger(size) ||
      !Number.isSafeInteger(expires)
    ) {
      return { kind: 'refused', error: new NotFoundError('No such upload') };
    }
    const ref: DeployRef = { accountId, containerId, deployId };
    const wanted = Buffer.from(this.signature(ref, size, expires));
    if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) {
      return { kind: 'refused', error: new ForbiddenError('The upload URL is not valid (its signature does not match)') };
    }
    if (request.method !== 'PUT') return { kind: 'refused', error: new BadRequestError('Upload the context with PUT') };
    if (expires * 1000 <= this.now()) return { kind: 'expired', ref };
    const declared = Number(request.headers['content-length']);
    if (request.headers['content-length'] === undefined || declared !== size) {
      const error =
        declared > size
          ? new PayloadTooLargeError(
              `This upload takes exactly ${size} bytes (the size_bytes of its deploy); the request declares ${declared}`,
            )
          : new BadRequestError(`This upload takes exactly ${size} bytes (the size_bytes of its deploy), with that Content-Length`);
      return { kind: 'refused', error };
    }
    await mkdir(this.options.dir, { recursive: true, mode: 0o700 });
    const path = this.pathOf(ref);
    let received = 0;
    const bounded = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        received += chunk.length;
        done(received > size ? new PayloadTooLargeError(`The upload passed its ${size} bytes`) : null, chunk);
      },
    });
    try {
      // `wx`: created exclusively, so a URL is used once; a second PUT finds the file.
      await pipeline(request, bounded, createWriteStream(path, { flags: 'wx', mode: 0o600 }));
    } catch (error) {
      if (error instanceof Error && 'code' in error && error.code === 'EEXIST') {
        return { kind: 'refused', error: new ConflictError('This upload URL was used already; create a new deploy') };
      }
      await rm(path, { force: true });
      return { kind: 'refused', error: error instanceof PayloadTooLargeError ? error : new BadRequestError('The upload was cut short') };
    }
    if (received !== size) {
      await rm(path, { force: true });
      return { kind: 'refused', error: new BadRequestError(`The upload was ${received} bytes, not the ${size} its deploy declared`) };
    }
    return { kind: 'received', ref };
  }
}

/** Answers an upload in the envelope every other endpoint uses. */
export function answerUpload(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)) });
  response.end(text);
}
