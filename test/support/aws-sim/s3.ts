import { createHash } from 'node:crypto';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { crc32 } from 'node:zlib';
import { AwsError } from './faults.js';

/** An object's CRC32 as S3's x-amz-checksum-crc32 carries it: big-endian, base64. */
const crc32Base64 = (body: Buffer): string => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(crc32(body) >>> 0);
  return bytes.toString('base64');
};

export interface S3SimOptions {
  /** The credentials presigned URLs are checked against (the test's SDK clients sign with them). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  region?: string;
}

/**
 * S3 as the project calls it (lib/aws/s3-context-uploads.ts), path-style: PutObject through a
 * presigned URL, GetObject and DeleteObject. A presigned PUT is checked as S3 checks it
 * (https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html): the signature
 * is recomputed over the request as sent, so a signed header sent with another value (a
 * Content-Length other than the one signed) is `SignatureDoesNotMatch` (403); past
 * X-Amz-Date + X-Amz-Expires it is `AccessDenied: Request has expired` (403); X-Amz-Expires over
 * 604800 (7 days) is refused. DeleteObject of a missing key succeeds
 * (https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObject.html).
 */
export class S3Sim {
  readonly objects = new Map<string, Buffer>();
  /** Every refused upload, by code, for tests to read. */
  readonly refusals: string[] = [];
  /** What S3 tells EventBridge of a new object (the bucket's EventBridge notifications), when set. */
  onObjectCreated?: (bucket: string, key: string, size: number) => void;

  constructor(private readonly options: S3SimOptions = {}) {}

  async handle(
    method: string,
    url: URL,
    headers: Record<string, string | string[] | undefined>,
    body: Buffer,
  ): Promise<{ status: number; body?: Buffer }> {
    const [, bucket, ...rest] = url.pathname.split('/');
    const key = `${bucket}/${decodeURIComponent(rest.join('/'))}`;
    if (method === 'PUT') {
      if (url.searchParams.has('X-Amz-Signature')) await this.checkPresigned(url, headers, body);
      this.objects.set(key, body);
      this.onObjectCreated?.(bucket!, key.slice(bucket!.length + 1), body.length);
      return { status: 200 };
    }
    if (method === 'GET') {
      const object = this.objects.get(key);
      if (!object) throw new AwsError('NoSuchKey', 'The specified key does not exist.', 404);
      return { status: 200, body: object };
    }
    if (method === 'DELETE') {
      this.objects.delete(key);
      return { status: 204 };
    }
    throw new AwsError('MethodNotAllowed', `The simulator does not model ${method}`, 405);
  }

  private async checkPresigned(url: URL, headers: Record<string, string | string[] | undefined>, body: Buffer): Promise<void> {
    const refuse = (code: string, message: string): never => {
      this.refusals.push(code);
      throw new AwsError(code, message, 403);
    };
    const amzDate = url.searchParams.get('X-Amz-Date') ?? '';
    const expires = Number(url.searchParams.get('X-Amz-Expires'));
    if (!(expires >= 1 && expires <= 604_800))
      refuse('AuthorizationQueryParametersError', 'X-Amz-Expires must be less than a week (in seconds) that is 604800');
    const signedAt = Date.parse(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
    if (Date.now() > signedAt + expires * 1000) refuse('AccessDenied', 'Request has expired');
    // Content-Length is what the client sent; S3 compares it with what it received, too.
    if (headers['content-length'] !== undefined && Number(headers['content-length']) !== body.length)
      refuse('IncompleteBody', 'The request body terminated unexpectedly');
    // The signature over what arrived, computed as the SDK's presigner computes it (the same canonical
    // request S3 builds): the received body's length, the URL's date and expiry.
    const [, bucket, ...rest] = url.pathname.split('/');
    const client = new S3Client({
      region: this.options.region ?? 'us-east-1',
      endpoint: `http://${String(headers.host)}`,
      forcePathStyle: true,
      credentials: this.options.credentials ?? { accessKeyId: 'simulated', secretAccessKey: 'simulated' },
      requestChecksumCalculation: url.searchParams.has('x-amz-checksum-crc32') ? 'WHEN_SUPPORTED' : 'WHEN_REQUIRED',
    });
    const recomputed = new URL(
      await getSignedUrl(
        client,
        new PutObjectCommand({ Bucket: bucket, Key: decodeURIComponent(rest.join('/')), ContentLength: body.length }),
        {
          expiresIn: expires,
          signingDate: new Date(signedAt),
          unhoistableHeaders: new Set(['content-length']),
        },
      ),
    );
    const expected = { query: Object.fromEntries(recomputed.searchParams) };
    const checksum = url.searchParams.get('x-amz-checksum-crc32');
    if (checksum && checksum !== crc32Base64(body)) refuse('BadDigest', 'The CRC32 you specified did not match the calculated checksum.');
    if (expected.query?.['X-Amz-Signature'] !== url.searchParams.get('X-Amz-Signature')) {
      refuse('SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.');
    }
  }

  /** The SHA-256 of an object, as a digest. */
  digestOf(key: string): string | undefined {
    const object = this.objects.get(key);
    return object ? `sha256:${createHash('sha256').update(object).digest('hex')}` : undefined;
  }
}
