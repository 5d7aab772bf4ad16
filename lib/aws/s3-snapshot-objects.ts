// Over 300 lines because it is the snapshots bucket's one adapter: the chore's signed upload form, the presigned GET, and
// the join of a snapshot's parts that resumes across invocations (its upload, its parts, each S3 limit it keeps).
import { createHmac } from 'node:crypto';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  S3Client,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';

/*
 * Volume snapshots' gzipped tars on S3 (docs/volumes.md, "Snapshots on AWS"). The chore task that
 * makes one holds no AWS credentials: the control plane hands it a presigned POST form for keys
 * under the snapshot's own parts prefix, the chore uploads the tar there in parts, and the job that
 * follows the chore joins the parts into the snapshot's one object (a multipart upload of
 * UploadPartCopy calls, S3 copying inside S3) and deletes them. The download and the restore get a
 * presigned GET of that object. Only the snapshot function signs forms (PutObject under the parts
 * prefix), only the signing functions get objects, and only the job joins and deletes parts.
 */

/** Where a snapshot's tar lies: under its account, so a key names exactly one account's snapshot. */
export const snapshotKeyOf = (accountId: string, snapshotId: string): string => `snapshots/${accountId}/${snapshotId}.tar.gz`;

/** The prefix of every snapshot key, which the stack's grants name. */
export const SNAPSHOT_KEY_PREFIX = 'snapshots/';

/**
 * The prefix of every snapshot's parts while its chore uploads them: a prefix of its own, so the
 * stack grants on parts apart from snapshots, and a lifecycle rule expires parts a job never
 * joined nor deleted (infra/constructs/volume-snapshots.ts).
 */
export const SNAPSHOT_PARTS_KEY_PREFIX = 'snapshot-parts/';

/** The one prefix a snapshot's chore may upload under: its account's and its snapshot's. */
export const snapshotPartsPrefixOf = (accountId: string, snapshotId: string): string =>
  `${SNAPSHOT_PARTS_KEY_PREFIX}${accountId}/${snapshotId}/`;

/**
 * A multipart upload takes parts numbered 1 to 10,000, each 5 MiB to 5 GiB but the last, which may
 * be smaller (https://docs.aws.amazon.com/AmazonS3/latest/userguide/qfacts.html).
 */
export const MAX_SNAPSHOT_PARTS = 10_000;

/** A part's name under its prefix: `part-00001` to `part-10000`, so the keys list in part order. */
export const snapshotPartName = (partNumber: number): string => `part-${String(partNumber).padStart(5, '0')}`;

/**
 * The largest file one POST upload takes: 5 GB ("You can upload objects of up to 5 GB in size in a
 * single operation" with a POST or PUT: https://docs.aws.amazon.com/AmazonS3/latest/userguide/upload-objects.html).
 */
export const MAX_SNAPSHOT_UPLOAD_BYTES = 5 * 1024 ** 3;

/** How many UploadPartCopy calls a join makes at once. */
export const JOIN_COPIES_AT_ONCE = 8;

/** How far a join got: the object made, or parts still to copy when the caller's time ran short. */
export type JoinProgress = { state: 'joined' } | { state: 'unfinished'; copied: number; total: number };

/**
 * S3's answers that refuse a join for good, whoever asks again: a part under 5 MiB but the last
 * (EntityTooSmall), a part or its order not as uploaded (InvalidPart, InvalidPartOrder), a bad part
 * number or a source over 5 GiB (InvalidArgument, InvalidRequest), no right to it (AccessDenied)
 * (https://docs.aws.amazon.com/AmazonS3/latest/API/API_CompleteMultipartUpload.html,
 * https://docs.aws.amazon.com/AmazonS3/latest/API/API_UploadPartCopy.html). Anything else (a 500, a
 * 503 SlowDown, a connection lost) S3 asks to be sent again
 * (https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html).
 */
const JOIN_REFUSALS = new Set([
  'EntityTooSmall',
  'InvalidPart',
  'InvalidPartOrder',
  'InvalidArgument',
  'InvalidRequest',
  'AccessDenied',
  'MalformedXML',
]);

/** A join S3 refused for good (JOIN_REFUSALS): joining again would be refused too. */
export const isJoinRefused = (error: unknown): boolean => error instanceof Error && JOIN_REFUSALS.has(error.name);

/**
 * A join whose upload or parts are gone under it: another delivery completed or aborted the upload
 * (NoSuchUpload, "the multipart upload might have been aborted or completed") or deleted the parts
 * once it had joined them (NoSuchKey on a copy's source).
 */
export const isJoinGone = (error: unknown): boolean =>
  error instanceof Error && (error.name === 'NoSuchUpload' || error.name === 'NoSuchKey');

/** A snapshot's part as the job finds it under the prefix. */
export interface SnapshotPart {
  key: string;
  size: number;
}

/** A browser-style form upload: POST multipart/form-data to `url` with `fields` and a `key` under `keyPrefix` first, the file last. */
export interface UploadForm {
  url: string;
  keyPrefix: string;
  fields: Record<string, string>;
}

const hmac = (key: Buffer | string, data: string): Buffer => createHmac('sha256', key).update(data).digest();
/** SigV4's compact date and time, `20261129T004500Z`. */
const amzDateOf = (at: Date): string =>
  at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

export class S3SnapshotObjects {
  constructor(
    private readonly bucket: string,
    private readonly client: S3Client,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * A presigned POST for any key under `keyPrefix` (AWS Signature Version 4 on the POST policy:
   * https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-HTTPPOSTConstructPolicy.html and
   * https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-post-example.html): the policy names the
   * bucket, `["starts-with", "$key", keyPrefix]` and a file of at most `maxPartBytes`, and expires
   * after `expiresInS`; S3 refuses a key outside the prefix, a larger part or a late upload. The
   * form's fields hold no `key`: the chore adds one per part. A POST rather than a presigned PUT,
   * because busybox's wget (the chore's image) sends only GET and POST.
   */
  async uploadForm(keyPrefix: string, maxPartBytes: number, expiresInS: number): Promise<UploadForm> {
    const credentials = await this.client.config.credentials();
    const region = await this.client.config.region();
    const signedAt = new Date(this.now());
    const amzDate = amzDateOf(signedAt);
    const dateStamp = amzDate.slice(0, 8);
    const credential = `${credentials.accessKeyId}/${dateStamp}/${region}/s3/aws4_request`;
    const fields: Record<string, string> = {
      success_action_status: '201',
      'x-amz-algorithm': 'AWS4-HMAC-SHA256',
      'x-amz-credential': credential,
      'x-amz-date': amzDate,
      ...(credentials.sessionToken ? { 'x-amz-security-token': credentials.sessionToken } : {}),
    };
    const policy = Buffer.from(
      JSON.stringify({
        expiration: new Date(signedAt.getTime() + expiresInS * 1000).toISOString(),
        conditions: [
          { bucket: this.bucket },
          ['starts-with', '$key', keyPrefix],
          ['content-length-range', 0, Math.min(maxPartBytes, MAX_SNAPSHOT_UPLOAD_BYTES)],
          ...Object.entries(fields).map(([name, value]) => ({ [name]: value })),
        ],
      }),
    ).toString('base64');
    const signingKey = hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, dateStamp), region), 's3'), 'aws4_request');
    const signature = createHmac('sha256', signingKey).update(policy).digest('hex');
    return { url: await this.bucketUrl(keyPrefix), keyPrefix, fields: { ...fields, policy, 'x-amz-signature': signature } };
  }

  /** A presigned GET of the object, good for `expiresInS` (at most 7 days for SigV4). */
  async downloadUrl(key: string, expiresInS: number): Promise<{ url: string; expiresAt: string }> {
    const signedAt = this.now();
    const url = await getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.bucket, Key: key }), {
      expiresIn: expiresInS,
      signingDate: new Date(signedAt),
    });
    return { url, expiresAt: new Date(signedAt + expiresInS * 1000).toISOString() };
  }

  /** The object's size, or undefined while there is none: ListObjectsV2 on the key (s3:ListBucket), which reads no content. */
  async sizeOf(key: string): Promise<number | undefined> {
    const listed = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: key, MaxKeys: 1 }));
    const object = listed.Contents?.find((candidate) => candidate.Key === key);
    return object?.Size;
  }

  /**
   * The parts under `prefix`, in key order (which is part order: snapshotPartName), with their
   * sizes: ListObjectsV2 pages of at most 1,000 keys
   * (https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectsV2.html), ten for 10,000 parts.
   */
  async partsUnder(prefix: string): Promise<SnapshotPart[]> {
    const parts: SnapshotPart[] = [];
    let token: string | undefined;
    do {
      const listed = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }));
      for (const object of listed.Contents ?? []) if (object.Key) parts.push({ key: object.Key, size: object.Size ?? 0 });
      token = listed.IsTruncated ? listed.NextContinuationToken : undefined;
    } while (token);
    return parts;
  }

  /**
   * Makes `key` the parts joined in order, inside S3, resuming where an earlier call stopped: the
   * key's multipart upload in progress (ListMultipartUploads), or a new one (CreateMultipartUpload);
   * the parts it holds already (ListParts); one UploadPartCopy per part it lacks
   * (https://docs.aws.amazon.com/AmazonS3/latest/API/API_UploadPartCopy.html), JOIN_COPIES_AT_ONCE
   * at a time while `keepCopying()`; then CompleteMultipartUpload
   * (https://docs.aws.amazon.com/AmazonS3/latest/API/API_CompleteMultipartUpload.html), which
   * refuses a part under 5 MiB but the last (EntityTooSmall). Up to 10,000 parts of 5 MiB to 5 GiB
   * each (https://docs.aws.amazon.com/AmazonS3/latest/userguide/qfacts.html). A failure is thrown and
   * leaves the upload as it is, for the next call to go on with or abortJoins to end; the caller begins
   * no join of a key whose object is there or whose snapshot is settled, so no upload is begun twice.
   */
  async join(key: string, parts: readonly SnapshotPart[], keepCopying: () => boolean): Promise<JoinProgress> {
    const uploadId = await this.uploadFor(key);
    const copied = await this.copiedParts(key, uploadId);
    const missing = parts.flatMap((part, index) => (copied.has(index + 1) ? [] : [{ part, partNumber: index + 1 }]));
    // S3 copies parts side by side, so a few at once shorten the join of a large snapshot.
    for (let start = 0; start < missing.length; start += JOIN_COPIES_AT_ONCE) {
      if (!keepCopying()) return { state: 'unfinished', copied: copied.size, total: parts.length };
      const batch = missing.slice(start, start + JOIN_COPIES_AT_ONCE);
      await Promise.all(
        batch.map(async ({ part, partNumber }) => {
          const output = await this.client.send(
            new UploadPartCopyCommand({
              Bucket: this.bucket,
              Key: key,
              UploadId: uploadId,
              PartNumber: partNumber,
              CopySource: `${this.bucket}/${part.key}`,
            }),
          );
          copied.set(partNumber, output.CopyPartResult?.ETag ?? '');
        }),
      );
    }
    const listed = parts.map((_, index) => ({ PartNumber: index + 1, ETag: copied.get(index + 1) ?? '' }));
    await this.client.send(
      new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: listed } }),
    );
    return { state: 'joined' };
  }

  /**
   * Aborts every upload of `key` in progress, so no copied part is left stored and billed
   * (https://docs.aws.amazon.com/AmazonS3/latest/API/API_AbortMultipartUpload.html); one gone
   * meanwhile (NoSuchUpload) is as aborted. The bucket's lifecycle rule aborts any this misses after a day.
   */
  async abortJoins(key: string): Promise<void> {
    for (const uploadId of await this.uploadsOf(key)) {
      await this.client
        .send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId }))
        .catch((error: unknown) => {
          if (!(error instanceof Error && error.name === 'NoSuchUpload')) throw error;
        });
    }
  }

  /**
   * The key's upload in progress, or a new one. Two deliveries that begin one each at once both go
   * on with the earliest (ListMultipartUploads sorts a key's uploads by when they were begun:
   * https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListMultipartUploads.html), and the later
   * one's is aborted.
   */
  private async uploadFor(key: string): Promise<string> {
    const [inProgress] = await this.uploadsOf(key);
    if (inProgress) return inProgress;
    const created = await this.client.send(
      new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key, ContentType: 'application/gzip' }),
    );
    if (!created.UploadId) throw new Error('CreateMultipartUpload answered no UploadId');
    const [earliest] = await this.uploadsOf(key);
    if (earliest && earliest !== created.UploadId) {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: created.UploadId }));
      return earliest;
    }
    return created.UploadId;
  }

  /** The ids of the key's uploads in progress, earliest first: ListMultipartUploads under the key, pages of at most 1,000. */
  private async uploadsOf(key: string): Promise<string[]> {
    const ids: string[] = [];
    let markers: { KeyMarker?: string; UploadIdMarker?: string } = {};
    for (;;) {
      const listed = await this.client.send(new ListMultipartUploadsCommand({ Bucket: this.bucket, Prefix: key, ...markers }));
      for (const upload of listed.Uploads ?? []) if (upload.Key === key && upload.UploadId) ids.push(upload.UploadId);
      if (!listed.IsTruncated) return ids;
      markers = { KeyMarker: listed.NextKeyMarker, UploadIdMarker: listed.NextUploadIdMarker };
    }
  }

  /**
   * The parts an upload holds, by part number, with their ETags: ListParts pages of at most 1,000
   * parts, the next after NextPartNumberMarker (https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListParts.html),
   * ten for 10,000 parts.
   */
  private async copiedParts(key: string, uploadId: string): Promise<Map<number, string>> {
    const copied = new Map<number, string>();
    let marker: string | undefined;
    for (;;) {
      const listed = await this.client.send(
        new ListPartsCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, ...(marker ? { PartNumberMarker: marker } : {}) }),
      );
      for (const part of listed.Parts ?? []) if (part.PartNumber && part.ETag) copied.set(part.PartNumber, part.ETag);
      if (!listed.IsTruncated || !listed.NextPartNumberMarker) return copied;
      marker = listed.NextPartNumberMarker;
    }
  }

  /** Deletes the object; a missing key is not an error (DeleteObject answers 204 either way). */
  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  /** The bucket's URL as this client addresses it (virtual-hosted on AWS, path-style at an IP endpoint), without the key. */
  private async bucketUrl(key: string): Promise<string> {
    const url = new URL(await getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.bucket, Key: key }), { expiresIn: 60 }));
    url.search = '';
    url.pathname = url.pathname.slice(0, url.pathname.length - key.length);
    return url.toString();
  }
}

/** The client snapshots are signed with; a presigned upload carries no checksum of the empty body it was signed over. */
export const newSnapshotObjectsClient = (region: string): S3Client => new S3Client({ region, requestChecksumCalculation: 'WHEN_REQUIRED' });
