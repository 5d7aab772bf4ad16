import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { SNAPSHOT_KEY_PREFIX } from '../../lib/aws/s3-snapshot-objects.js';
import { acknowledgeNagRule, acknowledgeWildcardResource } from '../nag.js';

/**
 * Where volume snapshots' gzipped tars live on AWS (docs/volumes.md, "Snapshots on AWS"): a private
 * bucket, encrypted, public access blocked, TLS only. A snapshot's object is written by its chore
 * task through a presigned POST form for its own key and read through presigned GETs (the download,
 * a restore), so only the functions that sign hold s3:PutObject or s3:GetObject on the snapshots'
 * prefix; the job that follows a chore only lists the prefix (the object's size, no content).
 */
export class VolumeSnapshotStore extends Construct {
  readonly bucket: s3.Bucket;
  private readonly objectsArn: string;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.bucket = new s3.Bucket(this, 'Snapshots', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      // No versioning: a deleted snapshot's object goes for good with it (DeleteObject by the delete function),
      // rather than staying as a noncurrent version.
      versioned: false,
      // Snapshots are kept until deleted (issue 34); an upload left unfinished goes after a day.
      lifecycleRules: [{ abortIncompleteMultipartUploadAfter: Duration.days(1) }],
      // Users' snapshots outlive a stack update that would replace or remove the bucket, as their volumes' file system does.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    acknowledgeNagRule(
      this.bucket,
      'AwsSolutions-S1',
      'Snapshots are written only through presigned forms of their own key and read only through presigned URLs the API hands their owner, and every one of those is logged by the function that signs it; server access logs would keep a second record of every key.',
    );
    this.objectsArn = this.bucket.arnForObjects(`${SNAPSHOT_KEY_PREFIX}*`);
  }

  get functionEnvironment(): Record<string, string> {
    return { SNAPSHOT_BUCKET: this.bucket.bucketName };
  }

  /** Lets a function sign uploads (put), downloads and restores (get), or delete snapshots' objects, under the prefix only. */
  grantObjects(role: iam.IRole & Construct, actions: ReadonlyArray<'put' | 'get' | 'delete'>): void {
    const names = { put: 's3:PutObject', get: 's3:GetObject', delete: 's3:DeleteObject' } as const;
    if (actions.length === 0) return;
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: actions.map((action) => names[action]), resources: [this.objectsArn] }));
    acknowledgeWildcardResource(
      role,
      this.objectsArn,
      "A snapshot's object is a key under snapshots/ named by its account and id at run time.",
    );
  }

  /** Lets the job that follows a snapshot's chore read the object's size: ListBucket of the snapshots' prefix, no content. */
  grantSizes(role: iam.IRole): void {
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['s3:ListBucket'],
        resources: [this.bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': [`${SNAPSHOT_KEY_PREFIX}*`] } },
      }),
    );
  }
}
