import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { AwsError } from './faults.js';

/** SHA-256 and its HMAC in the shape the signer takes (what @smithy/hash-node does, on node:crypto). */
class Sha256 {
  private readonly hash: Hash | Hmac;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', toBuffer(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(toBuffer(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
}

const toBuffer = (data: string | ArrayBuffer | ArrayBufferView): Buffer =>
  typeof data === 'string'
    ? Buffer.from(data, 'utf8')
    : ArrayBuffer.isView(data)
      ? Buffer.from(data.buffer, data.byteOffset, data.byteLength)
      : Buffer.from(data);

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

  constructor(private readonly options: S3SimOptions = {}) {}

  async handle(method: string, url: URL, headers: Record<string, string | string[] | undefined>, body: Buffer): Promise<{ status: number; body?: Buffer }> {
    const [, bucket, ...rest] = url.pathname.split('/');
    const key = `${bucket}/${decodeURIComponent(rest.join('/'))}`;
    if (method === 'PUT') {
      if (url.searchParams.has('X-Amz-Signature')) await this.checkPresigned(method, url, headers, body);
      this.objects.set(key, body);
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

  private async checkPresigned(method: string, url: URL, headers: Record<string, string | string[] | undefined>, body: Buffer): Promise<void> {
    const refuse = (code: string, message: string): never => {
      this.refusals.push(code);
      throw new AwsError(code, message, 403);
    };
    const amzDate = url.searchParams.get('X-Amz-Date') ?? '';
    const expires = Number(url.searchParams.get('X-Amz-Expires'));
    if (!(expires >= 1 && expires <= 604_800)) refuse('AuthorizationQueryParametersError', 'X-Amz-Expires must be less than a week (in seconds) that is 604800');
    const signedAt = Date.parse(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
    if (Date.now() > signedAt + expires * 1000) refuse('AccessDenied', 'Request has expired');
    const signedHeaders = (url.searchParams.get('X-Amz-SignedHeaders') ?? '').split(';');
    // Content-Length is what the client sent; S3 compares it with what it received, too.
    if (headers['content-length'] !== undefined && Number(headers['content-length']) !== body.length) refuse('IncompleteBody', 'The request body terminated unexpectedly');
    const query: Record<string, string> = {};
    for (const [name, value] of url.searchParams) if (name !== 'X-Amz-Signature') query[name] = value;
    const signer = new SignatureV4({
      service: 's3',
      region: this.options.region ?? 'us-east-1',
      credentials: this.options.credentials ?? { accessKeyId: 'simulated', secretAccessKey: 'simulated' },
      sha256: Sha256,
      uriEscapePath: false,
      applyChecksum: false,
    });
    const signedHeaderValues = Object.fromEntries(signedHeaders.map((name) => [name, String(headers[name] ?? '')]));
    const expected = await signer.presign(
      { method, protocol: 'http:', hostname: String(headers.host ?? '').split(':')[0]!, port: Number(String(headers.host ?? '').split(':')[1]), path: url.pathname, query, headers: signedHeaderValues },
      { signingDate: new Date(signedAt), expiresIn: expires, unhoistableHeaders: new Set(signedHeaders) },
    );
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
