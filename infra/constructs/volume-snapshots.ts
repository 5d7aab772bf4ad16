import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { SNAPSHOT_KEY_PREFIX, SNAPSHOT_PARTS_KEY_PREFIX } from '../../lib/aws/s3-snapshot-objects.js';
import { acknowledgeNagRule, acknowledgeWildcardResource } from '../nag.js';

/**
 * Where volume snapshots' gzipped tars live on AWS (docs/volumes.md, "Snapshots on AWS"): a private
 * bucket, encrypted, public access blocked, TLS only. A snapshot's chore task uploads its tar in
 * parts through a presigned POST form for its own parts prefix, so only the snapshot function holds
 * s3:PutObject on the parts' prefix (to sign it); the job that follows the chore joins the parts
 * into the snapshot's object (s3:GetObject on parts, s3:PutObject on snapshots) and deletes them;
 * the object is read through presigned GETs (the download, a restore).
 */
export class VolumeSnapshotStore extends Construct {
  readonly bucket: s3.Bucket;
  private readonly objectsArn: string;
  private readonly partsArn: string;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.bucket = new s3.Bucket(this, 'Snapshots', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      // No versioning: a deleted snapshot's object goes for good with it (DeleteObject by the delete function),
      // rather than staying as a noncurrent version.
      versioned: false,
      // Snapshots are kept until deleted (issue 34); a join left unfinished goes after a day, and so do parts no job
      // joined nor deleted (a chore's upload lands after its job gave up at the deadline, an hour after the start).
      lifecycleRules: [
        { abortIncompleteMultipartUploadAfter: Duration.days(1) },
        { prefix: SNAPSHOT_PARTS_KEY_PREFIX, expiration: Duration.days(1) },
      ],
      // Users' snapshots outlive a stack update that would replace or remove the bucket, as their volumes' file system does.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    acknowledgeNagRule(
      this.bucket,
      'AwsSolutions-S1',
      'Snapshots are written only through presigned forms of their own key and read only through presigned URLs the API hands their owner, and every one of those is logged by the function that signs it; server access logs would keep a second record of every key.',
    );
    this.objectsArn = this.bucket.arnForObjects(`${SNAPSHOT_KEY_PREFIX}*`);
    this.partsArn = this.bucket.arnForObjects(`${SNAPSHOT_PARTS_KEY_PREFIX}*`);
  }

  get functionEnvironment(): Record<string, string> {
    return { SNAPSHOT_BUCKET: this.bucket.bucketName };
  }

  /**
   * Lets a function sign chores' part uploads (`upload-parts`: PutObject on the parts' prefix), sign
   * downloads and restores (`get`) or delete snapshots (`delete`) under the snapshots' prefix only.
   */
  grantObjects(role: iam.IRole & Construct, actions: ReadonlyArray<'upload-parts' | 'get' | 'delete'>): void {
    const names = { get: 's3:GetObject', delete: 's3:DeleteObject' } as const;
    const objectActions = actions.flatMap((action) => (action === 'upload-parts' ? [] : [names[action]]));
    if (objectActions.length > 0) {
      role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: objectActions, resources: [this.objectsArn] }));
      acknowledgeWildcardResource(
        role,
        this.objectsArn,
        "A snapshot's object is a key under snapshots/ named by its account and id at run time.",
      );
    }
    if (actions.includes('upload-parts')) {
      role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:PutObject'], resources: [this.partsArn] }));
      acknowledgeWildcardResource(
        role,
        this.partsArn,
        "A snapshot's parts are keys under snapshot-parts/ named by its account and id at run time.",
      );
    }
  }

  /**
   * Lets the job that follows a snapshot's chore join its parts: list both prefixes (the parts,
   * the object's size), read and delete parts, and write, list, resume, complete or abort the multipart upload of
   * a snapshot's object (UploadPartCopy needs s3:GetObject on the source and s3:PutObject on the
   * target: https://docs.aws.amazon.com/AmazonS3/latest/API/API_UploadPartCopy.html).
   */
  grantJoins(role: iam.IRole & Construct): void {
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['s3:ListBucket'],
        resources: [this.bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': [`${SNAPSHOT_KEY_PREFIX}*`, `${SNAPSHOT_PARTS_KEY_PREFIX}*`] } },
      }),
    );
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:GetObject', 's3:DeleteObject'], resources: [this.partsArn] }));
    // A join goes on where the last invocation stopped: its upload in progress (ListMultipartUploads, on the bucket: no
    // prefix condition applies to it) and the parts copied so far (ListParts)
    // (https://docs.aws.amazon.com/AmazonS3/latest/userguide/mpuoverview.html#mpuAndPermissions).
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:ListBucketMultipartUploads'], resources: [this.bucket.bucketArn] }));
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['s3:PutObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts'],
        resources: [this.objectsArn],
      }),
    );
    acknowledgeWildcardResource(
      role,
      this.partsArn,
      "A snapshot's parts are keys under snapshot-parts/ named by its account and id at run time.",
    );
    acknowledgeWildcardResource(
      role,
      this.objectsArn,
      "A snapshot's object is a key under snapshots/ named by its account and id at run time.",
    );
  }
}
