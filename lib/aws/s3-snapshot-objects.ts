import { createHmac } from 'node:crypto';
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';

/*
 * Volume snapshots' gzipped tars on S3 (docs/volumes.md, "Snapshots on AWS"). The chore task that
 * makes one holds no AWS credentials: the control plane hands it a presigned POST form for exactly
 * one key, and the download and the restore get a presigned GET of it. Only the functions that
 * sign may put or get objects under the snapshots' prefix; the one that follows the chore only
 * lists it (the object's size), which reads no content.
 */

/** Where a snapshot's tar lies: under its account, so a key names exactly one account's snapshot. */
export const snapshotKeyOf = (accountId: string, snapshotId: string): string => `snapshots/${accountId}/${snapshotId}.tar.gz`;

/** The prefix of every snapshot key, which the stack's grants name. */
export const SNAPSHOT_KEY_PREFIX = 'snapshots/';

/**
 * The largest object a POST upload takes: 5 GB ("You can upload objects of up to 5 GB in size in a
 * single operation" with a POST or PUT: https://docs.aws.amazon.com/AmazonS3/latest/userguide/upload-objects.html).
 */
export const MAX_SNAPSHOT_UPLOAD_BYTES = 5 * 1024 ** 3;

/** A browser-style form upload: POST multipart/form-data to `url` with `fields` first and the file last. */
export interface UploadForm {
  url: string;
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
   * A presigned POST for exactly `key` (AWS Signature Version 4 on the POST policy:
   * https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-HTTPPOSTConstructPolicy.html and
   * https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-post-example.html): the policy names the
   * bucket, the key and at most 5 GB, and expires after `expiresInS`; S3 refuses any other key, a
   * larger body or a late upload. A POST rather than a presigned PUT, because busybox's wget (the
   * chore's image) sends only GET and POST.
   */
  async uploadForm(key: string, expiresInS: number): Promise<UploadForm> {
    const credentials = await this.client.config.credentials();
    const region = await this.client.config.region();
    const signedAt = new Date(this.now());
    const amzDate = amzDateOf(signedAt);
    const dateStamp = amzDate.slice(0, 8);
    const credential = `${credentials.accessKeyId}/${dateStamp}/${region}/s3/aws4_request`;
    const fields: Record<string, string> = {
      key,
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
          ['content-length-range', 0, MAX_SNAPSHOT_UPLOAD_BYTES],
          ...Object.entries(fields).map(([name, value]) => ({ [name]: value })),
        ],
      }),
    ).toString('base64');
    const signingKey = hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, dateStamp), region), 's3'), 'aws4_request');
    const signature = createHmac('sha256', signingKey).update(policy).digest('hex');
    return { url: await this.bucketUrl(key), fields: { ...fields, policy, 'x-amz-signature': signature } };
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
