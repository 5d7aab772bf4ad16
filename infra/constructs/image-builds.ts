// Over 300 lines because builds from source on AWS are one construct: the context bucket, the CodeBuild project
// and its buildspec, the events queue and rules, and every grant name each other's resources.
import { ArnFormat, Aws, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as codebuild from 'aws-cdk-lib/aws-codebuild';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { RELEASE_TAG_PREFIX } from '../../lib/aws/ecr-built-images.js';
import { acknowledgeNagRule, acknowledgeWildcardResource } from '../nag.js';
import { CONSUMER_TIMEOUT_S, type QueueConsumer, queueConsumer } from './task-state-events.js';

/** Where every built image goes: `<registry>/<prefix>/<account id>/<container id>` (lib/aws/codebuild-image-builder.ts). */
export const BUILD_REPOSITORY_PREFIX = 'builds';
/** Where contexts are uploaded (lib/aws/s3-context-uploads.ts `contextKeyOf`): the build role reads nothing else. */
export const CONTEXT_KEY_PREFIX = 'contexts/';
/**
 * Images kept per container repository: those of the newest ten deploys that went live (the
 * default of BUILT_IMAGES_KEPT, lib/config.ts, the same N locally). A rollback reuses an image, so
 * these are what a rollback can reach; an older release says its image was pruned (409). Ten bound
 * a container's storage (ten images of 200 MB are 2 GB, about $0.20 a month).
 */
export const BUILT_IMAGES_KEPT = 10;
/**
 * The build events queue, read by the build events function: batches of 10 (the event source's
 * default for SQS), at most 5 instances at once; its visibility timeout and redrive as every
 * queue's (infra/constructs/task-state-events.ts). The simulator reads it with these.
 */
export const BUILD_EVENTS_CONSUMER: QueueConsumer = queueConsumer({ batchSize: 10, maxConcurrency: 5 });

/** The default of BUILD_TIMEOUT_S (lib/config.ts). */
export const DEFAULT_BUILD_TIMEOUT_S = 900;

/**
 * The lifecycle policy each container's repository gets when its first build makes it
 * (https://docs.aws.amazon.com/AmazonECR/latest/userguide/LifecyclePolicies.html and
 * https://docs.aws.amazon.com/AmazonECR/latest/userguide/lifecycle_policy_parameters.html).
 * Rules apply lowest priority first, and an image that matches the tag selection of a rule is never
 * expired by a later one; `imageCountMoreThan` sorts the matching images by push time, newest
 * first, and expires those past the count; `tagStatus: any` must come last.
 * 1. Images tagged `release-…` (their deploy went live): the newest `kept` stay. Only deploys that
 *    went live count, so no run of failed deploys pushes out a release's image.
 * 2. Every other image (a failed or superseded deploy's, untagged layers of a push that did not
 *    finish) goes a day after its push: long past any build's going live.
 * ECR evaluates asynchronously: an image past the rules is expired within 24 hours
 * (https://docs.aws.amazon.com/AmazonECR/latest/userguide/lp_creation.html).
 */
export function builtImagesLifecyclePolicy(kept: number = BUILT_IMAGES_KEPT) {
  return {
    rules: [
      {
        rulePriority: 1,
        description: `The images of the newest ${kept} deploys that went live`,
        selection: { tagStatus: 'tagged', tagPrefixList: [RELEASE_TAG_PREFIX], countType: 'imageCountMoreThan', countNumber: kept },
        action: { type: 'expire' },
      },
      {
        rulePriority: 2,
        description: 'Images no release names, a day after their push',
        selection: { tagStatus: 'any', countType: 'sinceImagePushed', countUnit: 'days', countNumber: 1 },
        action: { type: 'expire' },
      },
    ],
  };
}

export const BUILT_IMAGES_LIFECYCLE_POLICY = builtImagesLifecyclePolicy();

/**
 * The build's commands (CodeBuild buildspec 0.2: every command of a phase runs in one shell, so
 * variables carry over: https://docs.aws.amazon.com/codebuild/latest/userguide/build-spec-ref.html).
 *
 * - Before `docker build`, the build host drops what docker's bridges forward to the link-local
 *   range: 169.254.170.2 serves the build role's credentials to the build container
 *   (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI) and 169.254.169.254 is the instance metadata. The
 *   buildspec's own commands reach them (OUTPUT, not FORWARD); a `RUN` step's container is
 *   forwarded, so it gets no credentials. The project has no VPC configuration, so builds cannot
 *   reach the workload VPC's tasks, file systems or endpoints at all.
 * - Build arguments arrive as one JSON value and become `--build-arg` words through jq and
 *   `xargs -0`: no shell ever reads a user's value.
 * - The push is by the deploy's own tag, and the digest the registry answered is exported as
 *   IMAGE_DIGEST; a failed docker build exports its last step lines as BUILD_FAILURE.
 * - The container's repository is made on its first build, scanned on push, with the lifecycle
 *   policy above.
 */
export function buildspecOf(lifecyclePolicy: object = BUILT_IMAGES_LIFECYCLE_POLICY): Record<string, unknown> {
  return {
    version: '0.2',
    env: {
      shell: 'bash',
      'exported-variables': ['IMAGE_DIGEST', 'BUILD_FAILURE'],
    },
    phases: {
      pre_build: {
        commands: [
          'set -euo pipefail',
          // RUN steps of the user's Dockerfile: no credential or metadata endpoint, whichever bridge they are on.
          'iptables -I FORWARD 1 -d 169.254.0.0/16 -j DROP',
          'iptables -I INPUT 1 ! -i lo -d 169.254.0.0/16 -j DROP',
          'ip6tables -I FORWARD 1 -d fd00:ec2::/64 -j DROP || true',
          'REGISTRY="${IMAGE_REPOSITORY%%/*}"',
          'REPOSITORY_NAME="${IMAGE_REPOSITORY#*/}"',
        ],
      },
      build: {
        commands: [
          'set -o pipefail',
          [
            'if ! printf \'%s\' "$BUILD_ARGS_JSON" | jq -j \'to_entries[] | "--build-arg\\u0000\\(.key)=\\(.value)\\u0000"\'',
            ' | xargs -0 docker build --pull --file "$DOCKERFILE" --tag "$IMAGE_REPOSITORY:$IMAGE_TAG" . 2>&1 | tee /tmp/docker-build.log;',
            " then export BUILD_FAILURE=\"$(grep -E '^(#[0-9]+ \\[|ERROR|failed to solve)' /tmp/docker-build.log | tail -n 3 | tr '\\n' ' ' | cut -c1-500)\"; exit 1; fi",
          ].join(''),
        ],
      },
      post_build: {
        // post_build runs after a failed build phase too; only a built image is pushed.
        commands: [
          'if [ "$CODEBUILD_BUILD_SUCCEEDING" != "1" ]; then exit 1; fi',
          'aws ecr describe-repositories --repository-names "$REPOSITORY_NAME" > /dev/null 2>&1 || aws ecr create-repository --repository-name "$REPOSITORY_NAME" --image-scanning-configuration scanOnPush=true --image-tag-mutability IMMUTABLE > /dev/null',
          `aws ecr put-lifecycle-policy --repository-name "$REPOSITORY_NAME" --lifecycle-policy-text '${JSON.stringify(lifecyclePolicy)}' > /dev/null`,
          'aws ecr get-login-password | docker login --username AWS --password-stdin "$REGISTRY"',
          'docker push "$IMAGE_REPOSITORY:$IMAGE_TAG"',
          'export IMAGE_DIGEST="$(docker inspect --format \'{{range .RepoDigests}}{{println .}}{{end}}\' "$IMAGE_REPOSITORY:$IMAGE_TAG" | grep -m1 "^$IMAGE_REPOSITORY@" | cut -d@ -f2)"',
        ],
      },
    },
  };
}

export interface ImageBuildsProps {
  /** The containers' architecture: builds run on the same, so the image runs where it is launched. */
  cpuArchitecture: 'ARM64' | 'X86_64';
  /** BUILD_TIMEOUT_S: the project's timeout, in whole minutes (CodeBuild takes 5 to 2160). */
  buildTimeoutS?: number;
  /** Where a message that fails MAX_RECEIVES times, or an event EventBridge cannot deliver, goes. */
  deadLetterQueue: sqs.IQueue;
  /** The role ECS pulls images with: it may pull the built images. */
  executionRole: iam.IRole;
}

/**
 * Deploys from source on AWS (docs/deploys.md, "Builds on AWS"): the private bucket build
 * contexts are uploaded to, the one CodeBuild project that builds them and pushes to ECR, and
 * the build events queue: CodeBuild's "Build State Change" events and the bucket's "Object
 * Created" events (an upload finished: the build starts) through EventBridge to one function.
 */
export class ImageBuilds extends Construct {
  readonly bucket: s3.Bucket;
  readonly project: codebuild.CfnProject;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;
  readonly eventsQueue: sqs.Queue;
  /** `{account}.dkr.ecr.{region}.{url suffix}/builds` */
  readonly repository = `${Aws.ACCOUNT_ID}.dkr.ecr.${Aws.REGION}.${Aws.URL_SUFFIX}/${BUILD_REPOSITORY_PREFIX}`;
  /** BUILD_TIMEOUT_S: the deploy service's and the project's. */
  readonly buildTimeoutS: number;
  private readonly repositoriesArn: string;
  private readonly contextsArn: string;

  constructor(scope: Construct, id: string, props: ImageBuildsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.bucket = new s3.Bucket(this, 'Contexts', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      // No versioning: a context is written once and read once by its build, then deleted; versions
      // would keep deleted (and possibly secret-bearing) contexts as noncurrent objects for nothing.
      versioned: false,
      // Contexts are deleted after their build; what a failed delete or an abandoned upload leaves goes after a day.
      lifecycleRules: [{ expiration: Duration.days(1), abortIncompleteMultipartUploadAfter: Duration.days(1) }],
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // Object Created events to EventBridge, set on the bucket itself: the construct's eventBridgeEnabled
    // would add a custom resource and its function for what CloudFormation declares natively.
    (this.bucket.node.defaultChild as s3.CfnBucket).notificationConfiguration = { eventBridgeConfiguration: { eventBridgeEnabled: true } };
    acknowledgeNagRule(
      this.bucket,
      'AwsSolutions-S1',
      'Build contexts live less than a day and are written only through presigned URLs of their own key and read only by their build; server access logs would keep a second copy of every key for longer than the objects.',
    );
    this.contextsArn = this.bucket.arnForObjects(`${CONTEXT_KEY_PREFIX}*`);
    this.repositoriesArn = stack.formatArn({
      service: 'ecr',
      resource: 'repository',
      resourceName: `${BUILD_REPOSITORY_PREFIX}/*`,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });

    this.logGroup = new logs.LogGroup(this, 'BuildLogs', { retention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    this.role = new iam.Role(this, 'BuildRole', {
      assumedBy: new iam.ServicePrincipal('codebuild.amazonaws.com'),
      description: "Deploy builds: read a context, push to the builds' repositories, write the build log; nothing else",
    });
    this.grantBuildRole();

    this.buildTimeoutS = props.buildTimeoutS ?? DEFAULT_BUILD_TIMEOUT_S;
    const timeoutMinutes = Math.min(2160, Math.max(5, Math.ceil(this.buildTimeoutS / 60)));
    this.project = new codebuild.CfnProject(this, 'Project', {
      description: 'Builds deploys from source: docker build of an uploaded context, pushed to ECR by digest',
      serviceRole: this.role.roleArn,
      source: {
        type: 'S3',
        // Each build names its own context object (StartBuild sourceLocationOverride); this is never built.
        location: `${this.bucket.bucketName}/${CONTEXT_KEY_PREFIX}none.tar.gz`,
        buildSpec: JSON.stringify(buildspecOf()),
      },
      artifacts: { type: 'NO_ARTIFACTS' },
      environment: {
        type: props.cpuArchitecture === 'ARM64' ? 'ARM_CONTAINER' : 'LINUX_CONTAINER',
        computeType: 'BUILD_GENERAL1_SMALL',
        image:
          props.cpuArchitecture === 'ARM64'
            ? codebuild.LinuxArmBuildImage.AMAZON_LINUX_2023_STANDARD_3_0.imageId
            : codebuild.LinuxBuildImage.AMAZON_LINUX_2023_5.imageId,
        // docker build needs its daemon, which only runs in privileged mode
        // (https://docs.aws.amazon.com/codebuild/latest/userguide/sample-docker.html).
        privilegedMode: true,
      },
      timeoutInMinutes: timeoutMinutes,
      queuedTimeoutInMinutes: 60,
      logsConfig: { cloudWatchLogs: { status: 'ENABLED', groupName: this.logGroup.logGroupName } },
    });
    this.project.node.addDependency(this.role);
    acknowledgeNagRule(
      this.project,
      'AwsSolutions-CB4',
      'The project makes no artifacts (its output is an image in ECR, encrypted there) and keeps no cache; its only other output is its CloudWatch log.',
    );
    acknowledgeNagRule(
      this.project,
      'AwsSolutions-CB3',
      'Privileged mode runs the docker daemon that docker build needs; the buildspec drops what its bridges forward to the credential and metadata endpoints before any user step runs.',
    );

    this.eventsQueue = new sqs.Queue(this, 'EventsQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // Six times its function's timeout, as Lambda recommends for an SQS event source.
      visibilityTimeout: Duration.seconds(BUILD_EVENTS_CONSUMER.visibilityTimeoutS),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: props.deadLetterQueue, maxReceiveCount: BUILD_EVENTS_CONSUMER.maxReceiveCount },
    });
    const deliver = new targets.SqsQueue(this.eventsQueue, {
      deadLetterQueue: props.deadLetterQueue,
      retryAttempts: 20,
      // Statuses advance by version, so a late event is harmless; the reconciler asks CodeBuild about one that never came.
      maxEventAge: Duration.hours(6),
    });
    new events.Rule(this, 'BuildStateChanged', {
      description: 'Deploy builds: CodeBuild build state changes of the project',
      eventPattern: {
        source: ['aws.codebuild'],
        detailType: ['CodeBuild Build State Change'],
        detail: { 'project-name': [this.project.ref] },
      },
      targets: [deliver],
    });
    new events.Rule(this, 'ContextUploaded', {
      description: 'Deploy builds: a build context was uploaded',
      eventPattern: {
        source: ['aws.s3'],
        detailType: ['Object Created'],
        detail: { bucket: { name: [this.bucket.bucketName] }, object: { key: [{ prefix: CONTEXT_KEY_PREFIX }] } },
      },
      targets: [deliver],
    });

    // ECS pulls the built images with the execution role (GetAuthorizationToken it already has for the pull-through cache).
    props.executionRole.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['ecr:BatchCheckLayerAvailability', 'ecr:BatchGetImage', 'ecr:GetDownloadUrlForLayer'],
        resources: [this.repositoriesArn],
      }),
    );
    acknowledgeWildcardResource(
      props.executionRole,
      this.repositoriesArn,
      'Built images live in a repository per container, made by its first build under the builds/ prefix; ECS pulls only from there and the pull-through prefixes.',
    );
  }

  private grantBuildRole(): void {
    const stack = Stack.of(this);
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ sid: 'ReadTheContext', actions: ['s3:GetObject', 's3:GetObjectVersion'], resources: [this.contextsArn] }),
    );
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'LocateTheBucket',
        actions: ['s3:GetBucketAcl', 's3:GetBucketLocation'],
        resources: [this.bucket.bucketArn],
      }),
    );
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'PushToTheBuildsRepositories',
        actions: [
          'ecr:DescribeRepositories',
          'ecr:CreateRepository',
          'ecr:PutLifecyclePolicy',
          'ecr:BatchCheckLayerAvailability',
          'ecr:BatchGetImage',
          'ecr:InitiateLayerUpload',
          'ecr:UploadLayerPart',
          'ecr:CompleteLayerUpload',
          'ecr:PutImage',
        ],
        resources: [this.repositoriesArn],
      }),
    );
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ sid: 'SignInToTheRegistry', actions: ['ecr:GetAuthorizationToken'], resources: ['*'] }),
    );
    const logStreams = stack.formatArn({
      service: 'logs',
      resource: 'log-group',
      resourceName: `${this.logGroup.logGroupName}:log-stream:*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ sid: 'WriteTheBuildLog', actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logStreams] }),
    );
    acknowledgeNagRule(
      this.role,
      'AwsSolutions-IAM5[Resource::*]',
      'ecr:GetAuthorizationToken has no resource-level permissions (IAM service authorization reference); the token only admits what the other statements allow: pushes under builds/.',
    );
    acknowledgeWildcardResource(
      this.role,
      this.contextsArn,
      "A build's context is its own object under contexts/, named per deploy at run time; the role reads nothing else in the bucket.",
    );
    acknowledgeWildcardResource(
      this.role,
      this.repositoriesArn,
      'One repository per container under builds/, made by its first build: the role may make, push to and set the lifecycle of those only.',
    );
    acknowledgeWildcardResource(this.role, logStreams, "One log stream per build, named by CodeBuild, in the project's own log group.");
  }

  /** Lets a function presign uploads (PutObject) and discard contexts (DeleteObject), under contexts/ only. */
  grantContexts(role: iam.IRole, access: { upload?: boolean; discard?: boolean }): void {
    const actions = [...(access.upload ? ['s3:PutObject'] : []), ...(access.discard ? ['s3:DeleteObject'] : [])];
    if (actions.length === 0) return;
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions, resources: [this.contextsArn] }));
    acknowledgeWildcardResource(role, this.contextsArn, "A deploy's context is an object under contexts/ named at run time.");
  }

  /** Lets a function start, stop and describe builds of the project, and nothing of any other. */
  grantBuilds(role: iam.IRole, actions: ReadonlyArray<'start' | 'stop' | 'describe'>): void {
    const names = { start: 'codebuild:StartBuild', stop: 'codebuild:StopBuild', describe: 'codebuild:BatchGetBuilds' } as const;
    if (actions.length === 0) return;
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: actions.map((action) => names[action]), resources: [this.project.attrArn] }),
    );
  }

  /** Lets a function read build logs (GetLogEvents on the build log group's streams). */
  grantReadLogs(role: iam.IRole): void {
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['logs:GetLogEvents'], resources: [this.logGroup.logGroupArn] }));
    acknowledgeWildcardResource(
      role,
      this.logGroup.logGroupArn,
      "The build log group's ARN ends in :* to cover its streams, one per build.",
    );
  }

  /** The build events queue → its function, reporting failed messages alone. */
  deliverTo(handler: lambda.IFunction, timeout: Duration): void {
    if (timeout.toSeconds() > CONSUMER_TIMEOUT_S) throw new Error(`The build events function may take at most ${CONSUMER_TIMEOUT_S} s`);
    handler.addEventSource(
      new SqsEventSource(this.eventsQueue, {
        batchSize: BUILD_EVENTS_CONSUMER.batchSize,
        maxConcurrency: BUILD_EVENTS_CONSUMER.maxConcurrency,
        reportBatchItemFailures: true,
      }),
    );
  }

  /**
   * Lets a function tag a built image as a release's and untag it (lib/aws/ecr-built-images.ts):
   * read its manifest, put it under a second tag, delete that tag; in the builds' repositories only.
   */
  grantReleaseTags(role: iam.IRole): void {
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['ecr:BatchGetImage', 'ecr:PutImage', 'ecr:BatchDeleteImage'],
        resources: [this.repositoriesArn],
      }),
    );
    acknowledgeWildcardResource(
      role,
      this.repositoriesArn,
      "A deploy's image is in its container's repository under builds/, named at run time; tags go on and off there only.",
    );
  }

  /**
   * Lets a function ask whether a release's built image is still there, and its digest
   * (lib/aws/ecr-image-digests.ts): DescribeImages, in the builds' repositories only.
   */
  grantDescribeImages(role: iam.IRole): void {
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['ecr:DescribeImages'], resources: [this.repositoriesArn] }));
    acknowledgeWildcardResource(
      role,
      this.repositoriesArn,
      "A release's built image is in its container's repository under builds/, named at run time; only those are described.",
    );
  }

  /** What lib/config.ts reads to build (lib/wiring/aws/build-site.ts). */
  get functionEnvironment(): Record<string, string> {
    return {
      BUILD_CONTEXT_BUCKET: this.bucket.bucketName,
      BUILD_PROJECT_NAME: this.project.ref,
      BUILD_LOG_GROUP: this.logGroup.logGroupName,
      BUILT_IMAGE_REPOSITORY: this.repository,
      BUILD_TIMEOUT_S: String(this.buildTimeoutS),
    };
  }
}
