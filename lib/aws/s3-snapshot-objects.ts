import { createHmac } from 'node:crypto';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
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
const JOIN_COPIES_AT_ONCE = 8;

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
   * Makes `key` the parts joined in order, inside S3: CreateMultipartUpload, one UploadPartCopy per
   * part (https://docs.aws.amazon.com/AmazonS3/latest/API/API_UploadPartCopy.html), then
   * CompleteMultipartUpload (https://docs.aws.amazon.com/AmazonS3/latest/API/API_CompleteMultipartUpload.html),
   * which refuses a part under 5 MiB but the last (EntityTooSmall). Any failure aborts the upload
   * (https://docs.aws.amazon.com/AmazonS3/latest/API/API_AbortMultipartUpload.html), so no copied
   * part is left stored and billed, and is thrown. Joining again makes the same object.
   */
  async join(key: string, parts: readonly SnapshotPart[]): Promise<void> {
    const created = await this.client.send(
      new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key, ContentType: 'application/gzip' }),
    );
    const uploadId = created.UploadId;
    if (!uploadId) throw new Error('CreateMultipartUpload answered no UploadId');
    try {
      const copied: Array<{ PartNumber: number; ETag: string }> = [];
      // S3 copies parts side by side, so a few at once shorten the join of a large snapshot within the task state
      // function's 30 s.
      for (let start = 0; start < parts.length; start += JOIN_COPIES_AT_ONCE) {
        const batch = parts.slice(start, start + JOIN_COPIES_AT_ONCE);
        const outputs = await Promise.all(
          batch.map((part, offset) =>
            this.client.send(
              new UploadPartCopyCommand({
                Bucket: this.bucket,
                Key: key,
                UploadId: uploadId,
                PartNumber: start + offset + 1,
                CopySource: `${this.bucket}/${part.key}`,
              }),
            ),
          ),
        );
        copied.push(...outputs.map((output, offset) => ({ PartNumber: start + offset + 1, ETag: output.CopyPartResult?.ETag ?? '' })));
      }
      await this.client.send(
        new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: copied } }),
      );
    } catch (error) {
      // An abort that fails too leaves the upload to the bucket's lifecycle rule, which aborts it after a day.
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId })).catch(() => undefined);
      throw error;
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
