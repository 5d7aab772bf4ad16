import { DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { ContextUploads, DeployRef, UploadTarget } from '../deploys/builds.js';

export interface S3ContextUploadSettings {
  /** The private bucket build contexts go to (infra/constructs/image-builds.ts). */
  bucket: string;
  /** How long an upload URL is good for; SigV4 presigned URLs allow at most 7 days (604800 s). */
  expiresInS: number;
  now?: () => number;
}

/** Where a deploy's context lies: under its account and container, so a build's source names exactly one object. */
export const contextKeyOf = (deploy: DeployRef): string => `contexts/${deploy.accountId}/${deploy.containerId}/${deploy.deployId}.tar.gz`;

/** The deploy a context key names (S3 event notifications URL-encode keys; ours are plain ids), or undefined. */
export function deployRefOfContextKey(key: string): DeployRef | undefined {
  const match = /^contexts\/([A-Za-z0-9_-]+)\/([A-Za-z0-9_-]+)\/([A-Za-z0-9_-]+)\.tar\.gz$/.exec(key);
  return match ? { accountId: match[1]!, containerId: match[2]!, deployId: match[3]! } : undefined;
}

/**
 * The client a presigned upload must be made with: by default the SDK adds a flexible checksum
 * (`x-amz-checksum-crc32`) of the empty body it presigns, which S3 then holds the real upload to
 * and refuses (BadDigest); `WHEN_REQUIRED` leaves it out
 * (https://docs.aws.amazon.com/sdkref/latest/guide/feature-dataintegrity.html).
 */
export const newContextUploadClient = (region: string): S3Client => new S3Client({ region, requestChecksumCalculation: 'WHEN_REQUIRED' });

/**
 * Build contexts on S3 through presigned PUTs (issue 33, item 6): the URL signs the exact
 * Content-Length (a signed header that differs fails the signature:
 * https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html), so an upload of
 * another size is refused by S3 itself, and it expires after `expiresInS`
 * (https://docs.aws.amazon.com/AmazonS3/latest/userguide/using-presigned-url.html). The object is
 * deleted after its build; the bucket's lifecycle rule removes any left behind.
 */
export class S3ContextUploads implements ContextUploads {
  constructor(
    private readonly client: S3Client,
    private readonly settings: S3ContextUploadSettings,
  ) {}

  async targetFor(deploy: DeployRef, sizeBytes: number): Promise<UploadTarget> {
    const now = (this.settings.now ?? Date.now)();
    const command = new PutObjectCommand({
      Bucket: this.settings.bucket,
      Key: contextKeyOf(deploy),
      ContentLength: sizeBytes,
    });
    const url = await getSignedUrl(this.client, command, {
      expiresIn: this.settings.expiresInS,
      signingDate: new Date(now),
      // Signed, never hoisted into the query: the client must send exactly these.
      unhoistableHeaders: new Set(['content-length']),
    });
    return {
      url,
      method: 'PUT',
      headers: { 'Content-Length': String(sizeBytes) },
      expiresAt: new Date(now + this.settings.expiresInS * 1000).toISOString(),
    };
  }

  async discard(deploy: DeployRef): Promise<void> {
    // DeleteObject of a key that is not there succeeds (https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObject.html).
    await this.client.send(new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: contextKeyOf(deploy) }));
  }
}
