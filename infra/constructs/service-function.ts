import { Duration, Stack } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRICS_NAMESPACE } from '../../lib/observability/metric-names.js';
import { BUNDLE_HANDLER } from '../bundling.js';
import { acknowledgeNagRule } from '../nag.js';
import { repositoryRoot } from '../paths.js';
import { FunctionBundles } from './function-bundles.js';

export interface ServiceFunctionProps {
  /** Handler module relative to `sourceRoot`; it exports `handler`. */
  entry: string;
  tableName: string;
  /** Where `entry` lives; the repository root unless a test says otherwise. */
  sourceRoot?: string;
  /** Shared with the other functions of a stack so that all bundles come from one esbuild run. */
  bundles?: FunctionBundles;
  timeout?: Duration;
  memorySize?: number;
  environment?: Record<string, string>;
  description?: string;
  /** Where failed asynchronous invocations go after Lambda's own retries. */
  deadLetterQueue?: sqs.IQueue;
  /** X-Ray active tracing (context `tracing`); on unless turned off. */
  tracing?: boolean;
  /** The application log level Lambda lets through and the Logger writes at (context `logLevel`). */
  logLevel?: LogLevel;
  /**
   * The log group shared by the stack's functions; without it the function gets one of its own.
   * Lambda names each stream of a shared group `YYYY/MM/DD/<function name>[<version>]<environment id>`,
   * so every line still says which function wrote it
   * (https://docs.aws.amazon.com/lambda/latest/dg/monitoring-cloudwatchlogs-loggroups.html).
   */
  logGroup?: logs.ILogGroup;
  /** Runs the function in these subnets with this security group (the probe function, in the workload VPC). */
  network?: { vpc: ec2.IVpc; subnets: ec2.SubnetSelection; securityGroup: ec2.ISecurityGroup };
}

export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

export const DEFAULT_TIMEOUT = Duration.seconds(10);
export const DEFAULT_MEMORY_MB = 512;

/**
 * The house Lambda function: Node.js 22 on arm64, a minified ESM bundle with source maps (see
 * infra/bundling.ts), a log group with a retention (the stack's shared one, or its own), and its
 * own role that starts with nothing but writing to that group.
 * Grants come from the route table through grantRoutePermissions.
 */
export class ServiceFunction extends Construct {
  /** The handler module the function was bundled from, relative to the source root. */
  readonly entry: string;
  readonly function: NodejsFunction;
  readonly role: iam.Role;
  readonly logGroup: logs.ILogGroup;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);
    const sourceRoot = props.sourceRoot ?? repositoryRoot;
    this.entry = props.entry;

    this.logGroup = props.logGroup ?? new logs.LogGroup(this, 'Logs', { retention: logs.RetentionDays.ONE_MONTH });
    // A role of our own instead of the default one, which carries the AWSLambdaBasicExecutionRole
    // managed policy (logs:* on every log group of the account).
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Runs ${serviceStackOf(this).stackName}/${id}`,
    });
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [this.logGroup.logGroupArn],
      }),
    );

    this.function = new NodejsFunction(this, 'Function', {
      code: (props.bundles ?? new FunctionBundles(sourceRoot)).codeFor(props.entry),
      handler: BUNDLE_HANDLER,
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize ?? DEFAULT_MEMORY_MB,
      timeout: props.timeout ?? DEFAULT_TIMEOUT,
      description: props.description,
      role: this.role,
      logGroup: this.logGroup,
      deadLetterQueue: props.deadLetterQueue,
      ...(props.network
        ? { vpc: props.network.vpc, vpcSubnets: props.network.subnets, securityGroups: [props.network.securityGroup] }
        : {}),
      // Active tracing samples requests into X-Ray with no SDK in the bundle
      // (docs.aws.amazon.com/lambda/latest/dg/services-xray.html).
      tracing: (props.tracing ?? true) ? lambda.Tracing.ACTIVE : lambda.Tracing.DISABLED,
      // JSON: the Logger's lines stay one JSON object each, and Lambda's own lines (START, REPORT)
      // become JSON too; the application level is the same one the Logger is given below
      // (docs.aws.amazon.com/lambda/latest/dg/monitoring-cloudwatchlogs-advanced.html).
      loggingFormat: lambda.LoggingFormat.JSON,
      applicationLogLevelV2: lambda.ApplicationLogLevel[props.logLevel ?? 'INFO'],
      environment: {
        NODE_OPTIONS: '--enable-source-maps',
        // The Logger's level and the service dimension of every metric (lib/log.ts, lib/observability/metrics.ts).
        LOG_LEVEL: props.logLevel ?? 'INFO',
        POWERTOOLS_SERVICE_NAME: serviceStackOf(this).stackName,
        POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
        TABLE_NAME: props.tableName,
        ...props.environment,
      },
    });

    if (props.tracing ?? true) {
      // CDK grants xray:PutTraceSegments and xray:PutTelemetryRecords on "*": X-Ray's write
      // actions name no resource (the AWS managed policy AWSXRayDaemonWriteAccess grants them on "*" too,
      // docs.aws.amazon.com/aws-managed-policy/latest/reference/AWSXRayDaemonWriteAccess.html).
      acknowledgeNagRule(
        this.role,
        'AwsSolutions-IAM5[Resource::*]',
        'X-Ray trace segments and telemetry cannot be scoped to a resource; the statement grants only xray:PutTraceSegments and xray:PutTelemetryRecords.',
      );
    }

    acknowledgeNagRule(
      this.function,
      'AwsSolutions-L1',
      'The runtime is pinned to nodejs22.x on purpose: bundles target node22 and the service is tested on Node 22; a newer runtime is a deliberate upgrade, not drift.',
    );
  }
}

/**
 * The service's own stack, above any nested stack a function lives in: its name is the service's
 * name in logs and metrics, where a nested stack's would be a generated one.
 */
function serviceStackOf(scope: Construct): Stack {
  let stack = Stack.of(scope);
  while (stack.nestedStackParent) stack = stack.nestedStackParent;
  return stack;
}
