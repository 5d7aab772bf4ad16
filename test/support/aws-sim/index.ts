import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { type AddressInfo, connect, createServer as createTcpServer, type Socket } from 'node:net';
import { type EcsSimOptions, EcsSim, type SimEfsVolume, type SimTask } from './ecs.js';
import { type EfsSimOptions, EfsSim } from './efs.js';
import { type DeliveryFaults, TaskEventRule } from './eventbridge.js';
import { AwsError, FaultCounts } from './faults.js';
import { type IamSimOptions, IamSim, iamErrorXml } from './iam.js';
import { type LogsSimOptions, LogsSim } from './logs.js';
import { SeededRandom } from './rng.js';
import { SecretsManagerSim } from './secrets-manager.js';
import { synthesizedBuildProject } from './build-project.js';
import { type CodeBuildSimOptions, CodeBuildSim } from './codebuild.js';
import { EcrSim } from './ecr.js';
import { S3Sim, type S3SimOptions } from './s3.js';
import { selfSignedCertificate } from './tls.js';
import { VpcResolverSim } from './resolver.js';
import { type Route53SimOptions, Route53Sim, route53ErrorXml } from './route53.js';
import { type BatchResponse, EventSource, type EventSourceOptions, type SimQueue, type SqsRecord, SqsSim } from './sqs.js';

export type { SimTask } from './ecs.js';
export type { SimAccessPoint } from './efs.js';
export type { SqsRecord } from './sqs.js';

export interface AwsSimOptions {
  seed?: number;
  /**
   * A fixed port, for configuration that must name the simulator before it starts: the SQS
   * client sends to the host of a message's QueueUrl rather than to its endpoint override, so
   * queue URLs (TASK_EVENTS_QUEUE_URL …) must point here. Default: a free port.
   */
  port?: number;
  ecs?: EcsSimOptions;
  route53?: Route53SimOptions & { zoneId?: string; zoneName?: string };
  logs?: LogsSimOptions & { logGroupName?: string };
  codebuild?: CodeBuildSimOptions;
  s3?: S3SimOptions;
  /** EventBridge → SQS delivery of ECS task state changes. */
  taskEvents?: DeliveryFaults & { queueName?: string };
  efs?: EfsSimOptions;
  iam?: IamSimOptions;
}

/**
 * AWS for the tests: one local HTTP server that the project's real SDK v3 clients reach through
 * the endpoint override environment variables (`AWS_ENDPOINT_URL_<SERVICE>`, read when a client
 * sends its first request), speaking each service's own wire protocol: ECS and CloudWatch Logs
 * awsJson1_1 (`X-Amz-Target: AmazonEC2ContainerServiceV20141113.*`, `Logs_20140328.*`), SQS
 * awsJson1_0 (`AmazonSQS.*`), Route 53 restXml (`/2013-04-01/hostedzone/…`). Each service is a
 * module of its own here, modelling what the service does and the limits it enforces, and
 * counting every fault it injects (`faults`). Task state changes go EventBridge → SQS (the
 * `task-events` queue) with the configured loss, duplicates, delay and reordering; `subscribe`
 * attaches a function to a queue as Lambda's SQS event source would, with its maximum concurrency.
 */
export class AwsSim {
  readonly faults = new FaultCounts();
  readonly random: SeededRandom;
  readonly ecs: EcsSim;
  readonly secretsManager = new SecretsManagerSim();
  readonly s3: S3Sim;
  readonly codebuild: CodeBuildSim;
  /** This account's private registry: built images, their tags and the repositories' lifecycle policies. */
  readonly ecr = new EcrSim();
  /** EventBridge → SQS: "CodeBuild Build State Change" events (infra/constructs/image-builds.ts). */
  readonly buildEventQueue: SimQueue;
  readonly route53: Route53Sim;
  /** The VPC's resolver in front of the private zone, with its cache (what the proxy tasks look names up through). */
  readonly resolver: VpcResolverSim;
  readonly logs: LogsSim;
  readonly efs: EfsSim;
  readonly iam: IamSim;
  readonly sqs: SqsSim;
  readonly taskEventQueue: SimQueue;
  readonly taskEvents: TaskEventRule;
  private readonly sources: EventSource[] = [];
  private readonly server = createServer((request, response) => void this.serve(request, response));
  /** The same services over TLS, on the same port: what a task's busybox reaches S3 through (`httpsUrl`). */
  private readonly tlsServer: HttpsServer | undefined;
  /** Takes each connection and hands it to the TLS server when it opens with a TLS handshake record (0x16), else to the HTTP server. */
  private readonly front = createTcpServer((socket) => this.route(socket));
  private readonly sockets = new Set<Socket>();
  url = '';
  /** `url` over https, with a throwaway self-signed certificate; none when this machine has no openssl. */
  httpsUrl: string | undefined;

  constructor(readonly options: AwsSimOptions = {}) {
    this.random = new SeededRandom(options.seed ?? 1);
    this.ecs = new EcsSim(options.ecs ?? {}, this.random, this.faults, (secret) => this.secretsManager.valueOf(secret));
    this.route53 = new Route53Sim(
      options.route53?.zoneId ?? 'Z0SIMULATED',
      options.route53?.zoneName ?? 'apps.internal',
      options.route53 ?? {},
      this.random,
      this.faults,
    );
    this.resolver = new VpcResolverSim(this.route53);
    this.logs = new LogsSim(options.logs?.logGroupName ?? 'workload-logs', options.logs ?? {}, this.faults, this.random);
    this.sqs = new SqsSim(() => this.url);
    this.taskEventQueue = this.sqs.queue(options.taskEvents?.queueName ?? 'task-events');
    this.buildEventQueue = this.sqs.queue('build-events');
    this.s3 = new S3Sim(options.s3 ?? {});
    // The context bucket's EventBridge notifications under contexts/, as the ContextUploaded rule sends them to the build events queue.
    this.s3.onObjectCreated = (bucket, key, size) => {
      if (!key.startsWith('contexts/')) return;
      this.buildEventQueue.send(
        JSON.stringify({
          version: '0',
          source: 'aws.s3',
          'detail-type': 'Object Created',
          detail: { bucket: { name: bucket }, object: { key, size } },
        }),
      );
    };
    this.codebuild = new CodeBuildSim(options.codebuild ?? {}, this.s3, this.buildEventQueue, this.ecr);
    // A task's image on this account's registry is pulled from ECR: gone, its task fails to start; its ENV is the container's.
    this.ecs.pullImagesWith((image) => this.ecr.pull(image));
    this.codebuild.onLogLine = (group, stream, line) => this.logs.appendTo(group, stream, line);
    this.taskEvents = new TaskEventRule(this.ecs, this.taskEventQueue, options.taskEvents ?? {}, this.random, this.faults);
    this.efs = new EfsSim(options.efs ?? {}, this.faults);
    this.iam = new IamSim(options.iam ?? {}, this.faults);
    this.ecs.mountEfsWith((task, volume) => this.mountEfs(task, volume));
    this.ecs.assumeTaskRolesWith((roleArn) => this.iam.ecsMayAssume(roleArn));
    // The awslogs driver: every line a task's container writes lands in its stream.
    this.ecs.onTaskLine((_task, line, logStream, logGroup) => this.logs.deliver(logStream, line, logGroup || undefined));
    const certificate = selfSignedCertificate();
    // busybox 1.35's ClientHello names no signature algorithms, which in TLS 1.2 means SHA-1 ones
    // (RFC 5246 section 7.4.1.4.1), and OpenSSL 3 refuses those above security level 0.
    this.tlsServer = certificate
      ? createHttpsServer({ ...certificate, ciphers: 'DEFAULT:@SECLEVEL=0' }, (request, response) => void this.serve(request, response))
      : undefined;
  }

  /**
   * A connection that opens with a TLS handshake record (0x16) goes through to the TLS server (on a
   * port of its own, with the bytes read so far first), any other to the HTTP server: both on one
   * port, so a presigned URL's host is the same over either.
   */
  private route(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    socket.once('data', (first: Buffer) => {
      socket.pause();
      if (first[0] === 0x16 && this.tlsServer) {
        const inner = connect((this.tlsServer.address() as AddressInfo).port, '127.0.0.1', () => {
          inner.write(first);
          socket.pipe(inner).pipe(socket);
        });
        this.sockets.add(inner);
        inner.once('close', () => this.sockets.delete(inner));
        inner.once('error', () => socket.destroy());
        socket.once('error', () => inner.destroy());
        return;
      }
      socket.unshift(first);
      this.server.emit('connection', socket);
      socket.resume();
    });
  }

  private mountEfs(task: SimTask, volume: SimEfsVolume): { failure: string } | { directory: string } {
    return mountEfs(this.efs, this.iam, task, volume);
  }

  async start(): Promise<this> {
    // A simulator that builds reads the project's settings from the synthesized stack first, so no build's clock waits for it.
    if (this.options.codebuild && !this.options.codebuild.project) await synthesizedBuildProject();
    await new Promise<void>((resolve, reject) => this.front.once('error', reject).listen(this.options.port ?? 0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.front.address() as AddressInfo).port}`;
    if (this.tlsServer) {
      const tls = this.tlsServer;
      await new Promise<void>((resolve, reject) => tls.once('error', reject).listen(0, '127.0.0.1', resolve));
      this.httpsUrl = this.url.replace(/^http:/, 'https:');
      // On AWS a task reaches S3 over https; the SDK clients here speak http to the simulator, so a
      // one-off task's argument naming the simulator (a presigned form or GET) is handed over https.
      const plain = `${this.url}/`;
      const overTls = `${this.httpsUrl}/`;
      this.ecs.rewriteTaskArgumentsWith((argument) => (argument.startsWith(plain) ? overTls + argument.slice(plain.length) : argument));
    }
    return this;
  }

  /**
   * The variables that point the SDK's clients at this simulator (set them before a client's
   * first request). Credentials are left as they are: DynamoDB Local keeps a database per access
   * key, so changing the key would hide the test's table.
   */
  endpointEnv(): Record<string, string> {
    return {
      AWS_ENDPOINT_URL_ECS: this.url,
      AWS_ENDPOINT_URL_ROUTE_53: this.url,
      AWS_ENDPOINT_URL_CLOUDWATCH_LOGS: this.url,
      AWS_ENDPOINT_URL_SQS: this.url,
      AWS_ENDPOINT_URL_SECRETS_MANAGER: this.url,
      AWS_ENDPOINT_URL_S3: this.url,
      AWS_ENDPOINT_URL_CODEBUILD: this.url,
      AWS_ENDPOINT_URL_ECR: this.url,
      AWS_ENDPOINT_URL_EFS: this.url,
      AWS_ENDPOINT_URL_IAM: this.url,
    };
  }

  /** Attaches `handler` to a queue as Lambda's SQS event source, one record an invocation, at most `maxConcurrency` at once. */
  subscribe(queue: SimQueue, handler: (record: SqsRecord) => Promise<unknown>, options: EventSourceOptions): EventSource {
    return this.subscribeBatches(queue, ([record]) => handler(record!), { ...options, batchSize: 1 });
  }

  /** As `subscribe`, with batches of up to `options.batchSize` records; the handler answers the records that failed. */
  subscribeBatches(
    queue: SimQueue,
    handler: (records: SqsRecord[]) => Promise<BatchResponse | unknown>,
    options: EventSourceOptions,
  ): EventSource {
    const source = new EventSource(queue, handler, options, this.faults);
    this.sources.push(source);
    return source;
  }

  async close(): Promise<void> {
    this.taskEvents.close();
    this.codebuild.close();
    this.ecs.close();
    this.logs.close();
    this.efs.close();
    await Promise.all(this.sources.map((source) => source.close()));
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.front.close(resolve));
    if (this.tlsServer?.listening) {
      this.tlsServer.closeAllConnections();
      await new Promise((resolve) => this.tlsServer!.close(resolve));
    }
  }

  private async serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of request) chunks.push(chunk as Buffer);
    } catch {
      // The client went away in the middle of its body (a chore's task stopped while it uploaded): nobody to answer.
      response.destroy();
      return;
    }
    const raw = Buffer.concat(chunks);
    const body = raw.toString('utf8');
    const target = String(request.headers['x-amz-target'] ?? '');
    const url = new URL(request.url ?? '/', 'http://sim');
    if (url.pathname.startsWith('/2013-04-01/')) {
      try {
        const xml = this.route53.handle(request.method ?? 'GET', url.pathname, url.searchParams, body);
        response.writeHead(200, { 'content-type': 'text/xml' }).end(xml);
      } catch (error) {
        const { code, message, status } = asAwsError(error);
        response.writeHead(status, { 'content-type': 'text/xml' }).end(route53ErrorXml(code, message));
      }
      return;
    }
    if (url.pathname.startsWith('/2015-02-01/')) {
      try {
        const { status, output } = this.efs.handle(request.method ?? 'GET', url.pathname, url.searchParams, body);
        response.writeHead(status, { 'content-type': 'application/json' }).end(output === undefined ? '' : JSON.stringify(output));
      } catch (error) {
        const { code, message, status } = asAwsError(error);
        const extra = error instanceof AwsError ? Object.fromEntries(Object.entries(error).filter(([key]) => /^[A-Z]/.test(key))) : {};
        response
          .writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': code })
          .end(JSON.stringify({ ErrorCode: code, Message: message, ...extra }));
      }
      return;
    }
    if (!target && String(request.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
      try {
        const xml = this.iam.handle(body);
        response.writeHead(200, { 'content-type': 'text/xml' }).end(xml);
      } catch (error) {
        const { code, message, status } = asAwsError(error);
        response.writeHead(status, { 'content-type': 'text/xml' }).end(iamErrorXml(code, message));
      }
      return;
    }
    if (!target && (url.pathname.split('/').length > 2 || url.searchParams.has('X-Amz-Signature') || url.searchParams.has('list-type'))) {
      try {
        const answer = await this.s3.handle(
          request.method ?? 'GET',
          url,
          request.headers,
          raw,
          this.tlsServer?.listening === true && 'encrypted' in request.socket,
        );
        response.writeHead(answer.status).end(answer.body);
      } catch (error) {
        const { code, message, status } = asAwsError(error);
        response
          .writeHead(status, { 'content-type': 'application/xml' })
          .end(`<Error><Code>${code}</Code><Message>${message}</Message></Error>`);
      }
      return;
    }
    const [service, action = ''] = target.split('.');
    const json10 = service === 'AmazonSQS';
    const contentType = json10 ? 'application/x-amz-json-1.0' : 'application/x-amz-json-1.1';
    try {
      const input = body ? JSON.parse(body) : {};
      let output: unknown;
      if (service === 'AmazonEC2ContainerServiceV20141113') output = this.ecs.handle(action, input);
      else if (service === 'Logs_20140328') output = this.logs.handle(action, input);
      else if (service === 'secretsmanager') output = this.secretsManager.handle(action, input);
      else if (service === 'CodeBuild_20161006') output = this.codebuild.handle(action, input);
      else if (service === 'AmazonEC2ContainerRegistry_V20150921') output = this.ecr.handle(action, input);
      else if (json10) output = this.sqs.handle(action, input);
      else throw new AwsError('UnknownOperationException', `The simulator does not serve ${target || request.url}`);
      response.writeHead(200, { 'content-type': contentType }).end(JSON.stringify(output));
    } catch (error) {
      const { code, message, status } = asAwsError(error);
      response
        .writeHead(status, { 'content-type': contentType, 'x-amzn-errortype': code, 'x-amzn-requestid': 'sim' })
        .end(JSON.stringify({ __type: code, message }));
    }
  }
}

/**
 * An EFS volume mounted at task start as Fargate does it with EFS IAM authorization: the file
 * system must be this one, the client must come with TLS and as the task role (the file system
 * policy lets no anonymous or plain-text client in: infra/constructs/workload-volumes.ts), the
 * access point must exist and be available, and the role must be allowed ClientMount through that
 * access point (IamSim.mayMount). The reasons are those ECS reports with ResourceInitializationError
 * (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/stopped-task-errors.html; the
 * mount.nfs4 texts as efs-utils prints them, e.g. https://github.com/56kcloud/terraform-grafana/issues/4).
 */
function mountEfs(efs: EfsSim, iam: IamSim, task: SimTask, volume: SimEfsVolume): { failure: string } | { directory: string } {
  const failure = efsMountFailure(efs, iam, task, volume);
  if (failure) return { failure };
  const point = efs.find(volume.efsVolumeConfiguration.authorizationConfig!.accessPointId!)!;
  return { directory: efs.createRootDirectory(point) };
}

function efsMountFailure(efs: EfsSim, iam: IamSim, task: SimTask, volume: SimEfsVolume): string | undefined {
  const config = volume.efsVolumeConfiguration;
  const prefix = 'ResourceInitializationError: failed to invoke EFS utils commands to set up EFS volumes: stderr:';
  const host = `${config.fileSystemId}.efs.us-east-1.amazonaws.com`;
  if (config.fileSystemId !== efs.fileSystemId)
    return `${prefix} Failed to resolve "${host}" - check that your file system ID is correct. : unsuccessful EFS utils command execution; code: 1`;
  const denied = `${prefix} b'mount.nfs4: access denied by server while mounting 127.0.0.1:/' : unsuccessful EFS utils command execution; code: 32`;
  if (config.transitEncryption !== 'ENABLED' || config.authorizationConfig?.iam !== 'ENABLED') return denied;
  const accessPointId = config.authorizationConfig.accessPointId;
  const point = accessPointId ? efs.find(accessPointId) : undefined;
  if (point?.LifeCycleState !== 'available' || point.FileSystemId !== efs.fileSystemId)
    return `${prefix} b'mount.nfs4: mounting ${host}:/ failed, reason given by server: No such file or directory' : unsuccessful EFS utils command execution; code: 32`;
  if (!iam.mayMount(task.taskRoleArn, 'elasticfilesystem:ClientMount', efs.fileSystemArn, point.AccessPointArn)) return denied;
  return undefined;
}

function asAwsError(error: unknown): AwsError {
  if (error instanceof AwsError) return error;
  return new AwsError('InternalFailure', error instanceof Error ? error.message : String(error), 500);
}

// Defined with the settings that name the simulator's queues before it starts.
export { simPortFor, simQueueUrl } from '../ecs-settings.js';

/** Starts a simulator and points this process's AWS SDK clients at it. */
export async function startAwsSim(options: AwsSimOptions = {}): Promise<AwsSim> {
  const sim = await new AwsSim(options).start();
  Object.assign(process.env, sim.endpointEnv());
  return sim;
}
