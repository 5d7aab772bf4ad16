import { createHash, createHmac, randomUUID } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
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
  /**
   * The smallest part but the last that CompleteMultipartUpload takes: S3's 5 MiB unless a test lowers
   * it, and then to the part size it gives the stack too (SNAPSHOT_PART_BYTES), never below it.
   */
  minimumPartBytes?: number;
}

/**
 * Multipart upload limits (https://docs.aws.amazon.com/AmazonS3/latest/userguide/qfacts.html):
 * parts numbered 1 to 10,000, each 5 MiB to 5 GiB but the last, which may be smaller.
 */
export const S3_MINIMUM_PART_BYTES = 5 * 1024 ** 2;
const MAXIMUM_PART_BYTES = 5 * 1024 ** 3;
const MAXIMUM_PART_NUMBER = 10_000;

interface MultipartUpload {
  bucket: string;
  key: string;
  initiated: Date;
  parts: Map<number, { etag: string; body: Buffer; lastModified: Date }>;
}

/**
 * ListParts and ListMultipartUploads answer at most 1,000 entries a page, their default too
 * (https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListParts.html,
 * https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListMultipartUploads.html).
 */
const MAXIMUM_LISTED = 1000;

const etagOf = (body: Buffer): string => `"${createHash('md5').update(body).digest('hex')}"`;
const xmlText = (value: string): string => value.replace(/&quot;/g, '"').replace(/&amp;/g, '&');

/**
 * S3 as the project calls it (lib/aws/s3-context-uploads.ts, lib/aws/s3-snapshot-objects.ts),
 * path-style: PutObject through a presigned URL, a browser-style POST upload through a presigned
 * form (a snapshot chore's), GetObject (presigned or not), ListObjectsV2 and DeleteObject, and a
 * multipart upload's CreateMultipartUpload, UploadPartCopy, ListMultipartUploads, ListParts,
 * CompleteMultipartUpload and AbortMultipartUpload. A presigned PUT is checked as S3 checks it
 * (https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html): the signature
 * is recomputed over the request as sent, so a signed header sent with another value (a
 * Content-Length other than the one signed) is `SignatureDoesNotMatch` (403); past
 * X-Amz-Date + X-Amz-Expires it is `AccessDenied: Request has expired` (403); X-Amz-Expires over
 * 604800 (7 days) is refused. DeleteObject of a missing key succeeds
 * (https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObject.html).
 */
export class S3Sim {
  readonly objects = new Map<string, Buffer>();
  /** Multipart uploads created and neither completed nor aborted, by upload id. */
  readonly uploads = new Map<string, MultipartUpload>();
  /** Every request, in order: its action (S3's API names; `PostObject` for a form upload) and its bucket, key and parameters. */
  readonly calls: Array<{ action: string; input: Record<string, unknown> }> = [];
  /** Every refused upload, by code, for tests to read. */
  readonly refusals: string[] = [];
  /** What S3 tells EventBridge of a new object (the bucket's EventBridge notifications), when set. */
  onObjectCreated?: (bucket: string, key: string, size: number) => void;

  /** The smallest part but the last that CompleteMultipartUpload takes (S3SimOptions.minimumPartBytes). */
  minimumPartBytes: number;
  /** How far S3's clock is ahead of this machine's, ms: a test moves it past a form's or URL's expiry. */
  clockAheadMs = 0;
  /**
   * Form uploads to answer 503 SlowDown before storing anything, as S3 does when a prefix takes more
   * requests than it can yet (https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html:
   * "Please reduce your request rate"); a test sets it.
   */
  slowDownNextPosts = 0;
  /**
   * UploadPartCopy calls to answer 500 InternalError ("We encountered an internal error. Please try
   * again.": https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html) before copying: by
   * the part number they copy to, how many more; a test sets it.
   */
  readonly failCopies = new Map<number, number>();

  constructor(private readonly options: S3SimOptions = {}) {
    this.minimumPartBytes = options.minimumPartBytes ?? S3_MINIMUM_PART_BYTES;
  }

  private now(): number {
    return Date.now() + this.clockAheadMs;
  }

  async handle(
    method: string,
    url: URL,
    headers: Record<string, string | string[] | undefined>,
    body: Buffer,
    overTls = false,
  ): Promise<{ status: number; body?: Buffer }> {
    const [, bucket, ...rest] = url.pathname.split('/');
    const key = `${bucket}/${decodeURIComponent(rest.join('/'))}`;
    const objectKey = decodeURIComponent(rest.join('/'));
    const uploadId = url.searchParams.get('uploadId');
    if (method === 'POST' && url.searchParams.has('uploads')) return this.createMultipartUpload(bucket!, objectKey);
    if (method === 'PUT' && uploadId && headers['x-amz-copy-source'])
      return this.uploadPartCopy(
        bucket!,
        objectKey,
        uploadId,
        Number(url.searchParams.get('partNumber')),
        String(headers['x-amz-copy-source']),
      );
    if (method === 'POST' && uploadId) return this.completeMultipartUpload(bucket!, objectKey, uploadId, body.toString('utf8'));
    if (method === 'DELETE' && uploadId) return this.abortMultipartUpload(bucket!, objectKey, uploadId);
    if (method === 'PUT') {
      if (url.searchParams.has('X-Amz-Signature')) await this.checkPresigned(url, headers, body);
      this.objects.set(key, body);
      this.onObjectCreated?.(bucket!, key.slice(bucket!.length + 1), body.length);
      return { status: 200 };
    }
    if (method === 'POST' && rest.join('/') === '') {
      this.calls.push({ action: 'PostObject', input: { Bucket: bucket, OverTls: overTls } });
      if (this.slowDownNextPosts > 0) {
        this.slowDownNextPosts -= 1;
        this.refusals.push('SlowDown');
        throw new AwsError('SlowDown', 'Please reduce your request rate.', 503);
      }
      const stored = this.postObject(bucket!, headers, body);
      this.onObjectCreated?.(bucket!, stored.key, stored.size);
      return { status: 201, body: Buffer.from(`<PostResponse><Bucket>${bucket}</Bucket><Key>${stored.key}</Key></PostResponse>`) };
    }
    if (method === 'GET' && url.searchParams.has('uploads') && objectKey === '')
      return { status: 200, body: this.listMultipartUploads(bucket!, url.searchParams) };
    if (method === 'GET' && uploadId) return { status: 200, body: this.listParts(bucket!, objectKey, uploadId, url.searchParams) };
    if (method === 'GET' && url.searchParams.get('list-type') === '2') return { status: 200, body: this.list(bucket!, url.searchParams) };
    if (method === 'GET') {
      this.calls.push({ action: 'GetObject', input: { Bucket: bucket, Key: objectKey } });
      if (url.searchParams.has('X-Amz-Signature')) await this.checkPresignedGet(url, headers);
      const object = this.objects.get(key);
      if (!object) throw new AwsError('NoSuchKey', 'The specified key does not exist.', 404);
      return { status: 200, body: object };
    }
    if (method === 'DELETE') {
      this.calls.push({ action: 'DeleteObject', input: { Bucket: bucket, Key: objectKey } });
      this.objects.delete(key);
      return { status: 204 };
    }
    throw new AwsError('MethodNotAllowed', `The simulator does not model ${method}`, 405);
  }

  /** A client that signs as the SDK's presigner does for a request that reached this host, so a URL's signature can be recomputed. */
  private signingClient(
    headers: Record<string, string | string[] | undefined>,
    requestChecksumCalculation: 'WHEN_SUPPORTED' | 'WHEN_REQUIRED',
  ): S3Client {
    return new S3Client({
      region: this.options.region ?? 'us-east-1',
      endpoint: `http://${String(headers.host)}`,
      forcePathStyle: true,
      credentials: this.options.credentials ?? { accessKeyId: 'simulated', secretAccessKey: 'simulated' },
      requestChecksumCalculation,
    });
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
    if (this.now() > signedAt + expires * 1000) refuse('AccessDenied', 'Request has expired');
    // Content-Length is what the client sent; S3 compares it with what it received, too.
    if (headers['content-length'] !== undefined && Number(headers['content-length']) !== body.length)
      refuse('IncompleteBody', 'The request body terminated unexpectedly');
    // The signature over what arrived, computed as the SDK's presigner computes it (the same canonical
    // request S3 builds): the received body's length, the URL's date and expiry.
    const [, bucket, ...rest] = url.pathname.split('/');
    const client = this.signingClient(headers, url.searchParams.has('x-amz-checksum-crc32') ? 'WHEN_SUPPORTED' : 'WHEN_REQUIRED');
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

  /**
   * ListObjectsV2 (https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectsV2.html): the
   * keys under `prefix`, in UTF-8 order, at most `max-keys` (1,000 at the most) a page, with their
   * sizes, the next page after a `continuation-token`.
   */
  private list(bucket: string, query: URLSearchParams): Buffer {
    const prefix = query.get('prefix') ?? '';
    const max = Math.min(Number(query.get('max-keys') ?? 1000), 1000);
    const after = query.get('continuation-token') ? Buffer.from(query.get('continuation-token')!, 'base64url').toString() : '';
    this.calls.push({ action: 'ListObjectsV2', input: { Bucket: bucket, Prefix: prefix } });
    const keys = [...this.objects.keys()]
      .filter((key) => key.startsWith(`${bucket}/${prefix}`))
      .map((key) => key.slice(bucket.length + 1))
      .sort()
      .filter((key) => key > after);
    const page = keys.slice(0, max);
    const next =
      keys.length > max ? `<NextContinuationToken>${Buffer.from(page.at(-1)!).toString('base64url')}</NextContinuationToken>` : '';
    const contents = page.map(
      (key) => `<Contents><Key>${key}</Key><Size>${this.objects.get(`${bucket}/${key}`)!.length}</Size></Contents>`,
    );
    return Buffer.from(
      `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>${bucket}</Name><Prefix>${prefix}</Prefix><KeyCount>${page.length}</KeyCount><MaxKeys>${max}</MaxKeys><IsTruncated>${keys.length > max}</IsTruncated>${next}${contents.join('')}</ListBucketResult>`,
    );
  }

  /**
   * A browser-based POST upload as S3 checks it
   * (https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-HTTPPOSTConstructPolicy.html): the
   * policy's signature with the signing key of its credential's date and Region, its expiration,
   * every form field named by an exact-match condition (except the policy, the signature and the
   * file), the bucket, and the file's size within `content-length-range`.
   */
  private postObject(bucket: string, headers: Record<string, string | string[] | undefined>, body: Buffer): { key: string; size: number } {
    const refuse = (code: string, message: string): never => {
      this.refusals.push(code);
      throw new AwsError(code, message, 403);
    };
    const boundary = /boundary=([^;]+)/.exec(String(headers['content-type'] ?? ''))?.[1];
    if (!boundary) throw new AwsError('MalformedPOSTRequest', 'The body of your POST request is not well-formed multipart/form-data.', 400);
    const { fields, file } = parseForm(body, boundary);
    if (!file || !fields.policy || !fields['x-amz-signature'] || !fields.key)
      throw new AwsError('InvalidArgument', 'POST requires exactly one file upload per request.', 400);
    const { accessKeyId, secretAccessKey } = this.options.credentials ?? { accessKeyId: 'simulated', secretAccessKey: 'simulated' };
    const [credentialKey, dateStamp, region, service] = (fields['x-amz-credential'] ?? '').split('/');
    if (credentialKey !== accessKeyId) refuse('InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.');
    const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();
    const signingKey = hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, dateStamp ?? ''), region ?? ''), service ?? ''), 'aws4_request');
    if (createHmac('sha256', signingKey).update(fields.policy).digest('hex') !== fields['x-amz-signature'])
      refuse('SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.');
    const policy = JSON.parse(Buffer.from(fields.policy, 'base64').toString('utf8')) as { expiration: string; conditions: unknown[] };
    if (this.now() > Date.parse(policy.expiration)) refuse('AccessDenied', 'Invalid according to Policy: Policy expired.');
    // Exact matches ({ name: value } or ["eq", "$name", value]) and starts-with (["starts-with", "$name", prefix]).
    const exact = new Map<string, string>();
    const startsWith = new Map<string, string>();
    for (const condition of policy.conditions) {
      if (Array.isArray(condition) && condition[0] === 'content-length-range') {
        if (file.length < Number(condition[1]) || file.length > Number(condition[2]))
          throw new AwsError('EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size', 400);
      } else if (Array.isArray(condition) && (condition[0] === 'eq' || condition[0] === 'starts-with')) {
        (condition[0] === 'eq' ? exact : startsWith).set(String(condition[1]).replace(/^\$/, ''), String(condition[2]));
      } else if (condition && typeof condition === 'object' && !Array.isArray(condition)) {
        for (const [name, value] of Object.entries(condition)) exact.set(name, String(value));
      }
    }
    if (exact.get('bucket') !== bucket)
      refuse('AccessDenied', 'Invalid according to Policy: Policy Condition failed: ["eq", "$bucket", ...]');
    for (const [name, prefix] of startsWith) {
      if (!(fields[name] ?? '').startsWith(prefix))
        refuse('AccessDenied', `Invalid according to Policy: Policy Condition failed: ["starts-with", "$${name}", "${prefix}"]`);
    }
    for (const [name, value] of Object.entries(fields)) {
      if (name === 'policy' || name === 'x-amz-signature' || name.startsWith('x-ignore-')) continue;
      if (startsWith.has(name)) continue;
      if (exact.get(name) !== value) refuse('AccessDenied', `Invalid according to Policy: Extra input fields: ${name}`);
    }
    this.objects.set(`${bucket}/${fields.key}`, file);
    return { key: fields.key, size: file.length };
  }

  /** CreateMultipartUpload (https://docs.aws.amazon.com/AmazonS3/latest/API/API_CreateMultipartUpload.html): a new upload id. */
  private createMultipartUpload(bucket: string, key: string): { status: number; body: Buffer } {
    this.calls.push({ action: 'CreateMultipartUpload', input: { Bucket: bucket, Key: key } });
    const uploadId = randomUUID();
    this.uploads.set(uploadId, { bucket, key, initiated: new Date(), parts: new Map() });
    return {
      status: 200,
      body: Buffer.from(
        `<InitiateMultipartUploadResult><Bucket>${bucket}</Bucket><Key>${key}</Key><UploadId>${uploadId}</UploadId></InitiateMultipartUploadResult>`,
      ),
    };
  }

  /**
   * UploadPartCopy (https://docs.aws.amazon.com/AmazonS3/latest/API/API_UploadPartCopy.html): a part
   * numbered 1 to 10,000 of an upload of this key, copied from an object of this simulator (at most
   * 5 GiB: https://docs.aws.amazon.com/AmazonS3/latest/userguide/qfacts.html); its ETag is the copy's MD5.
   */
  private uploadPartCopy(
    bucket: string,
    key: string,
    uploadId: string,
    partNumber: number,
    copySource: string,
  ): { status: number; body: Buffer } {
    const source = decodeURIComponent(copySource.replace(/^\//, ''));
    this.calls.push({
      action: 'UploadPartCopy',
      input: { Bucket: bucket, Key: key, UploadId: uploadId, PartNumber: partNumber, CopySource: source },
    });
    const upload = this.uploadOf(bucket, key, uploadId);
    if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > MAXIMUM_PART_NUMBER)
      throw new AwsError('InvalidArgument', 'Part number must be an integer between 1 and 10000, inclusive', 400);
    const failures = this.failCopies.get(partNumber) ?? 0;
    if (failures > 0) {
      this.failCopies.set(partNumber, failures - 1);
      throw new AwsError('InternalError', 'We encountered an internal error. Please try again.', 500);
    }
    const copied = this.objects.get(source);
    if (!copied) throw new AwsError('NoSuchKey', 'The specified key does not exist.', 404);
    if (copied.length > MAXIMUM_PART_BYTES)
      throw new AwsError(
        'InvalidRequest',
        `The specified copy source is larger than the maximum allowable size for a copy source: ${MAXIMUM_PART_BYTES}`,
        400,
      );
    const etag = etagOf(copied);
    upload.parts.set(partNumber, { etag, body: Buffer.from(copied), lastModified: new Date() });
    return {
      status: 200,
      body: Buffer.from(
        `<CopyPartResult><ETag>${etag.replace(/"/g, '&quot;')}</ETag><LastModified>${new Date().toISOString()}</LastModified></CopyPartResult>`,
      ),
    };
  }

  /**
   * CompleteMultipartUpload (https://docs.aws.amazon.com/AmazonS3/latest/API/API_CompleteMultipartUpload.html):
   * the listed parts, in ascending order (InvalidPartOrder), each uploaded with its ETag (InvalidPart),
   * each but the last at least the minimum part size (EntityTooSmall), make the object. The upload
   * is then gone: completing it again, copying into it or listing its parts is NoSuchUpload (404), "the
   * multipart upload might have been aborted or completed" (the same page's errors).
   */
  private completeMultipartUpload(bucket: string, key: string, uploadId: string, xml: string): { status: number; body: Buffer } {
    const listed = [...xml.matchAll(/<Part>([\s\S]*?)<\/Part>/g)].map(([, part]) => ({
      partNumber: Number(/<PartNumber>(\d+)<\/PartNumber>/.exec(part!)?.[1]),
      etag: xmlText(/<ETag>([\s\S]*?)<\/ETag>/.exec(part!)?.[1] ?? ''),
    }));
    this.calls.push({ action: 'CompleteMultipartUpload', input: { Bucket: bucket, Key: key, UploadId: uploadId, Parts: listed.length } });
    const upload = this.uploadOf(bucket, key, uploadId);
    if (listed.length === 0)
      throw new AwsError('MalformedXML', 'The XML you provided was not well-formed or did not validate against our published schema.', 400);
    const minimum = this.minimumPartBytes;
    const bodies: Buffer[] = [];
    for (const [index, { partNumber, etag }] of listed.entries()) {
      if (index > 0 && partNumber <= listed[index - 1]!.partNumber)
        throw new AwsError(
          'InvalidPartOrder',
          'The list of parts was not in ascending order. The parts list must be specified in order by part number.',
          400,
        );
      const part = upload.parts.get(partNumber);
      if (!part || part.etag !== etag)
        throw new AwsError(
          'InvalidPart',
          "One or more of the specified parts could not be found. The part might not have been uploaded, or the specified entity tag might not have matched the part's entity tag.",
          400,
        );
      if (index < listed.length - 1 && part.body.length < minimum)
        throw new AwsError('EntityTooSmall', 'Your proposed upload is smaller than the minimum allowed object size.', 400);
      bodies.push(part.body);
    }
    this.uploads.delete(uploadId);
    const object = Buffer.concat(bodies);
    this.objects.set(`${bucket}/${key}`, object);
    return {
      status: 200,
      body: Buffer.from(
        `<CompleteMultipartUploadResult><Bucket>${bucket}</Bucket><Key>${key}</Key><ETag>&quot;${createHash('md5').update(object).digest('hex')}-${listed.length}&quot;</ETag></CompleteMultipartUploadResult>`,
      ),
    };
  }

  /**
   * ListMultipartUploads (https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListMultipartUploads.html):
   * the uploads begun and neither completed nor aborted, of keys under `prefix`, sorted by key and
   * then by when they were begun, at most `max-uploads` (1,000 at the most) a page, the next page
   * after `key-marker` and `upload-id-marker`.
   */
  private listMultipartUploads(bucket: string, query: URLSearchParams): Buffer {
    const prefix = query.get('prefix') ?? '';
    const max = Math.min(Number(query.get('max-uploads') ?? MAXIMUM_LISTED), MAXIMUM_LISTED);
    const keyMarker = query.get('key-marker') ?? '';
    const uploadIdMarker = query.get('upload-id-marker') ?? '';
    this.calls.push({ action: 'ListMultipartUploads', input: { Bucket: bucket, Prefix: prefix } });
    const sorted = [...this.uploads.entries()]
      .filter(([, upload]) => upload.bucket === bucket && upload.key.startsWith(prefix))
      .sort(([, a], [, b]) => (a.key === b.key ? a.initiated.getTime() - b.initiated.getTime() : a.key < b.key ? -1 : 1));
    const markerAt = uploadIdMarker ? sorted.findIndex(([id]) => id === uploadIdMarker) : -1;
    const after = keyMarker
      ? sorted.filter(([, upload], index) => upload.key > keyMarker || (upload.key === keyMarker && markerAt >= 0 && index > markerAt))
      : sorted;
    const page = after.slice(0, max);
    const truncated = after.length > max;
    const last = page.at(-1);
    const next =
      truncated && last ? `<NextKeyMarker>${last[1].key}</NextKeyMarker><NextUploadIdMarker>${last[0]}</NextUploadIdMarker>` : '';
    const uploads = page.map(
      ([id, upload]) =>
        `<Upload><Key>${upload.key}</Key><UploadId>${id}</UploadId><Initiated>${upload.initiated.toISOString()}</Initiated></Upload>`,
    );
    return Buffer.from(
      `<?xml version="1.0" encoding="UTF-8"?><ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>${bucket}</Bucket><Prefix>${prefix}</Prefix><MaxUploads>${max}</MaxUploads><IsTruncated>${truncated}</IsTruncated>${next}${uploads.join('')}</ListMultipartUploadsResult>`,
    );
  }

  /**
   * ListParts (https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListParts.html): the parts of an
   * upload in progress, by part number, after `part-number-marker`, at most `max-parts` (1,000 at the
   * most) a page with NextPartNumberMarker when there are more; NoSuchUpload for an upload completed,
   * aborted or unknown.
   */
  private listParts(bucket: string, key: string, uploadId: string, query: URLSearchParams): Buffer {
    const max = Math.min(Number(query.get('max-parts') ?? MAXIMUM_LISTED), MAXIMUM_LISTED);
    const marker = Number(query.get('part-number-marker') ?? 0);
    this.calls.push({ action: 'ListParts', input: { Bucket: bucket, Key: key, UploadId: uploadId, PartNumberMarker: marker } });
    const upload = this.uploadOf(bucket, key, uploadId);
    const after = [...upload.parts.entries()].filter(([number]) => number > marker).sort(([a], [b]) => a - b);
    const page = after.slice(0, max);
    const truncated = after.length > max;
    const next = truncated ? `<NextPartNumberMarker>${page.at(-1)![0]}</NextPartNumberMarker>` : '';
    const parts = page.map(
      ([number, part]) =>
        `<Part><PartNumber>${number}</PartNumber><ETag>${part.etag.replace(/"/g, '&quot;')}</ETag><Size>${part.body.length}</Size><LastModified>${part.lastModified.toISOString()}</LastModified></Part>`,
    );
    return Buffer.from(
      `<?xml version="1.0" encoding="UTF-8"?><ListPartsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>${bucket}</Bucket><Key>${key}</Key><UploadId>${uploadId}</UploadId><PartNumberMarker>${marker}</PartNumberMarker><MaxParts>${max}</MaxParts><IsTruncated>${truncated}</IsTruncated>${next}${parts.join('')}</ListPartsResult>`,
    );
  }

  /** AbortMultipartUpload (https://docs.aws.amazon.com/AmazonS3/latest/API/API_AbortMultipartUpload.html): its parts go; NoSuchUpload for an unknown id. */
  private abortMultipartUpload(bucket: string, key: string, uploadId: string): { status: number } {
    this.calls.push({ action: 'AbortMultipartUpload', input: { Bucket: bucket, Key: key, UploadId: uploadId } });
    this.uploadOf(bucket, key, uploadId);
    this.uploads.delete(uploadId);
    return { status: 204 };
  }

  private uploadOf(bucket: string, key: string, uploadId: string): MultipartUpload {
    const upload = this.uploads.get(uploadId);
    if (!upload || upload.bucket !== bucket || upload.key !== key)
      throw new AwsError(
        'NoSuchUpload',
        'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.',
        404,
      );
    return upload;
  }

  /** A presigned GET: its signature over the URL as the SDK's presigner computes it, and its expiry. */
  private async checkPresignedGet(url: URL, headers: Record<string, string | string[] | undefined>): Promise<void> {
    const refuse = (code: string, message: string): never => {
      this.refusals.push(code);
      throw new AwsError(code, message, 403);
    };
    const amzDate = url.searchParams.get('X-Amz-Date') ?? '';
    const expires = Number(url.searchParams.get('X-Amz-Expires'));
    const signedAt = Date.parse(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
    if (this.now() > signedAt + expires * 1000) refuse('AccessDenied', 'Request has expired');
    const [, bucket, ...rest] = url.pathname.split('/');
    const client = this.signingClient(headers, 'WHEN_REQUIRED');
    const recomputed = new URL(
      await getSignedUrl(client, new GetObjectCommand({ Bucket: bucket, Key: decodeURIComponent(rest.join('/')) }), {
        expiresIn: expires,
        signingDate: new Date(signedAt),
      }),
    );
    if (recomputed.searchParams.get('X-Amz-Signature') !== url.searchParams.get('X-Amz-Signature'))
      refuse('SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.');
  }

  /** The SHA-256 of an object, as a digest. */
  digestOf(key: string): string | undefined {
    const object = this.objects.get(key);
    return object ? `sha256:${createHash('sha256').update(object).digest('hex')}` : undefined;
  }
}

/** multipart/form-data's parts: text fields by name, and the part named `file` as bytes. */
function parseForm(body: Buffer, boundary: string): { fields: Record<string, string>; file?: Buffer } {
  const fields: Record<string, string> = {};
  let file: Buffer | undefined;
  const delimiter = Buffer.from(`--${boundary}`);
  let start = body.indexOf(delimiter);
  while (start >= 0) {
    const next = body.indexOf(delimiter, start + delimiter.length);
    if (next < 0) break;
    const part = body.subarray(start + delimiter.length + 2, next - 2);
    const headerEnd = part.indexOf('\r\n\r\n');
    const head = part.subarray(0, headerEnd).toString('utf8');
    const name = /name="([^"]*)"/.exec(head)?.[1];
    const content = part.subarray(headerEnd + 4);
    if (name === 'file') file = Buffer.from(content);
    else if (name) fields[name] = content.toString('utf8');
    start = next;
  }
  return { fields, ...(file ? { file } : {}) };
}
