import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { extract } from 'tar-stream';
import { AwsError } from './faults.js';
import type { EcrSim } from './ecr.js';
import type { S3Sim } from './s3.js';
import type { SimQueue } from './sqs.js';
import { type BuildProjectSettings, CREDENTIAL_ENDPOINTS, runStepReach, synthesizedBuildProject } from './build-project.js';

const REGION = 'us-east-1';
const ACCOUNT = '123456789012';

export interface CodeBuildSimOptions {
  /** Running builds at once, past which builds queue: the account's quota per compute type (default 20 here; quotas vary). */
  concurrentBuilds?: number;
  /** How long each phase takes, ms. */
  phaseMs?: number;
  /** How long a simulated minute lasts (timeouts and `RUN sleep N`), ms. */
  minuteMs?: number;
  /** The project's settings; by default the stack's own, synthesized (build-project.ts). */
  project?: () => Promise<BuildProjectSettings>;
}

/**
 * What EventBridge may do to a build's state change on its way to the queue: lose it (a rule
 * target that failed past its retries, into the dead-letter queue instead) or deliver it late
 * (retries with backoff, up to the target's maximum event age:
 * https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-retry-policy.html).
 */
export interface BuildEventFaults {
  lose?: (build: { id: string; buildStatus: string; currentPhase: string }) => boolean;
  /** Seconds every event is held back (SQS DelaySeconds, at most 900). */
  delaySeconds?: number;
}

interface NameValue {
  name: string;
  value: string;
}

interface SimPhase {
  phaseType: string;
  phaseStatus?: string;
  contexts?: Array<{ statusCode: string; message: string }>;
}

interface SimBuild {
  id: string;
  arn: string;
  projectName: string;
  buildStatus: 'IN_PROGRESS' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'STOPPED' | 'FAULT';
  currentPhase: string;
  timeoutInMinutes: number;
  sourceLocation: string;
  environmentVariables: NameValue[];
  exportedEnvironmentVariables: NameValue[];
  phases: SimPhase[];
  logs: string[];
  startedAt: number;
  stopRequested?: boolean;
}

/**
 * CodeBuild as the project calls it (lib/aws/codebuild-image-builder.ts): StartBuild,
 * BatchGetBuilds, StopBuild over awsJson1_1 (`CodeBuild_20161006.*`), with the buildspec's docker
 * build stood in for by a reading of the context: its source is the S3 object StartBuild named
 * (missing: DOWNLOAD_SOURCE fails, CLIENT_ERROR), the Dockerfile must be in it, a `RUN exit N` or
 * `RUN false` step fails the BUILD phase naming the step and its code, `RUN sleep S` takes S
 * simulated seconds. Limits as documented: the timeout is 5 to 2160 minutes and a build past it
 * ends TIMED_OUT (https://docs.aws.amazon.com/codebuild/latest/APIReference/API_StartBuild.html);
 * past the concurrent-build quota builds wait QUEUED, and at most five times the quota may queue
 * (https://docs.aws.amazon.com/codebuild/latest/userguide/builds-working.html), beyond which
 * StartBuild is AccountLimitExceededException; the same idempotencyToken answers the same build.
 * Every phase change is a "CodeBuild Build State Change" / phase event to `events`, and the
 * succeeded build's image digest is in ECR (`images`), exported as IMAGE_DIGEST.
 *
 * Every build also asserts that its RUN steps get no AWS credentials, from the project's
 * synthesized settings (runStepReach): where a RUN step could reach the build role's credentials
 * or the instance metadata, the build ends FAILED naming why (`credentialExposures` keeps it), so no
 * simulated deploy passes on a project that would hand a user's Dockerfile the role. A RUN step
 * that names one of those endpoints logs that it got nothing.
 */
export class CodeBuildSim {
  readonly builds = new Map<string, SimBuild>();
  /** Images pushed, by `<repository>:<tag>` → digest (ECR's view). */
  readonly images = new Map<string, string>();
  /** Set by a test: events lost or late from now on. */
  eventFaults: BuildEventFaults = {};
  /** Where a build's log lines go (CloudWatch Logs, the project's group, a stream per build): set by the simulator. */
  onLogLine: (group: string, stream: string, line: string) => void = () => undefined;
  /** Why RUN steps of a build would have got AWS credentials, by build id (the assertion above). */
  readonly credentialExposures = new Map<string, string[]>();
  /** The events lost so far, for the test to see that one was. */
  readonly lostEvents: string[] = [];
  private readonly tokens = new Map<string, string>();
  /** Builds taken off the queue, waiting for the project's settings before their first phase. */
  private readonly starting = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly options: CodeBuildSimOptions,
    private readonly s3: S3Sim,
    private readonly events: SimQueue,
    private readonly ecr?: EcrSim,
  ) {}

  handle(action: string, input: any): unknown {
    switch (action) {
      case 'StartBuild':
        return { build: this.wire(this.start(input)) };
      case 'BatchGetBuilds': {
        const ids: string[] = input.ids ?? [];
        if (ids.length > 100) throw new AwsError('InvalidInputException', 'ids: at most 100');
        return {
          builds: ids.flatMap((id) => (this.builds.has(id) ? [this.wire(this.builds.get(id)!)] : [])),
          buildsNotFound: ids.filter((id) => !this.builds.has(id)),
        };
      }
      case 'StopBuild': {
        const build = this.builds.get(String(input.id));
        if (!build) throw new AwsError('ResourceNotFoundException', `Build ${input.id} not found`);
        if (build.buildStatus !== 'IN_PROGRESS') throw new AwsError('InvalidInputException', 'Build is not in progress');
        build.stopRequested = true;
        this.finish(build, 'STOPPED');
        return { build: this.wire(build) };
      }
      default:
        throw new AwsError('InvalidAction', `The simulator does not model ${action}`);
    }
  }

  close(): void {
    for (const timer of this.timers) clearTimeout(timer);
  }

  private get quota(): number {
    return this.options.concurrentBuilds ?? 20;
  }

  private start(input: any): SimBuild {
    const token = input.idempotencyToken ? String(input.idempotencyToken) : undefined;
    if (token && this.tokens.has(token)) return this.builds.get(this.tokens.get(token)!)!;
    const timeout = Number(input.timeoutInMinutesOverride ?? 60);
    if (!Number.isInteger(timeout) || timeout < 5 || timeout > 2160)
      throw new AwsError('InvalidInputException', 'timeoutInMinutesOverride must be from 5 to 2160');
    const queued = [...this.builds.values()].filter(
      (build) => build.buildStatus === 'IN_PROGRESS' && build.currentPhase === 'QUEUED',
    ).length;
    if (queued >= this.quota * 5)
      throw new AwsError('AccountLimitExceededException', 'Cannot have more than ' + this.quota * 5 + ' builds in queue for the account');
    const projectName = String(input.projectName);
    const uuid = randomUUID();
    const build: SimBuild = {
      id: `${projectName}:${uuid}`,
      arn: `arn:aws:codebuild:${REGION}:${ACCOUNT}:build/${projectName}:${uuid}`,
      projectName,
      buildStatus: 'IN_PROGRESS',
      currentPhase: 'QUEUED',
      timeoutInMinutes: timeout,
      sourceLocation: String(input.sourceLocationOverride ?? ''),
      environmentVariables: (input.environmentVariablesOverride ?? []).map((variable: NameValue) => ({
        name: variable.name,
        value: variable.value,
      })),
      exportedEnvironmentVariables: [],
      phases: [{ phaseType: 'SUBMITTED', phaseStatus: 'SUCCEEDED' }, { phaseType: 'QUEUED' }],
      logs: [],
      startedAt: Date.now(),
    };
    this.builds.set(build.id, build);
    if (token) this.tokens.set(token, build.id);
    this.publish(build);
    this.startQueued();
    return build;
  }

  /** Moves queued builds to PROVISIONING while fewer than the quota run. */
  private startQueued(): void {
    const running = () =>
      [...this.builds.values()].filter(
        (build) => build.buildStatus === 'IN_PROGRESS' && (build.currentPhase !== 'QUEUED' || this.starting.has(build.id)),
      ).length;
    for (const build of this.builds.values()) {
      if (running() >= this.quota) return;
      if (build.buildStatus === 'IN_PROGRESS' && build.currentPhase === 'QUEUED' && !this.starting.has(build.id)) {
        this.starting.add(build.id);
        void this.run(build);
      }
    }
  }

  private async run(build: SimBuild): Promise<void> {
    // Before the build's clock starts: the first build of a process waits for the stack's synthesis.
    const settings = await (this.options.project ?? synthesizedBuildProject)();
    this.starting.delete(build.id);
    const reaches = Object.entries(runStepReach(settings).reaches).filter((entry): entry is [string, string] => entry[1] !== undefined);
    if (reaches.length > 0) {
      const why = reaches.map(([endpoint, reason]) => `${endpoint}: ${reason}`);
      this.credentialExposures.set(build.id, why);
      return this.fail(build, 'SIMULATOR_ASSERTION', `RUN steps would get AWS credentials (${why.join('; ')})`);
    }
    const minuteMs = this.options.minuteMs ?? 60_000;
    const deadline = Date.now() + build.timeoutInMinutes * minuteMs;
    const timeout = setTimeout(() => this.finish(build, 'TIMED_OUT'), build.timeoutInMinutes * minuteMs);
    this.timers.add(timeout);
    try {
      await this.enter(build, 'PROVISIONING');
      await this.enter(build, 'DOWNLOAD_SOURCE');
      const [bucket, ...key] = build.sourceLocation.split('/');
      const context = this.s3.objects.get(`${bucket}/${key.join('/')}`);
      if (!context)
        return this.fail(build, 'CLIENT_ERROR', `NoSuchKey: The specified key does not exist. for primary source ${build.sourceLocation}`);
      await this.enter(build, 'INSTALL');
      await this.enter(build, 'PRE_BUILD');
      await this.enter(build, 'BUILD');
      const variables = Object.fromEntries(build.environmentVariables.map((variable) => [variable.name, variable.value]));
      let files: Map<string, string>;
      try {
        files = await readContext(context);
      } catch (error) {
        return this.fail(
          build,
          'COMMAND_EXECUTION_ERROR',
          'Error while executing command: tar -xzf context. Reason: exit status 2',
          `the context is not a gzipped tar: ${(error as Error).message}`,
        );
      }
      const dockerfile = files.get(variables.DOCKERFILE ?? 'Dockerfile');
      if (dockerfile === undefined) {
        return this.fail(
          build,
          'COMMAND_EXECUTION_ERROR',
          'Error while executing command: docker build. Reason: exit status 1',
          `no ${variables.DOCKERFILE ?? 'Dockerfile'} in the context`,
        );
      }
      const steps = dockerfile
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line && !line.startsWith('#'));
      for (const [index, step] of steps.entries()) {
        this.log(build, `#${index + 1} [${index + 1}/${steps.length}] ${step}`);
        for (const endpoint of CREDENTIAL_ENDPOINTS.filter((address) => step.startsWith('RUN ') && step.includes(address)))
          this.log(build, `#${index + 1} ${endpoint}: connection timed out (no credentials)`);
        const sleep = /^RUN sleep (\d+)$/.exec(step);
        if (sleep) await this.wait((Number(sleep[1]) * minuteMs) / 60);
        const exit = /^RUN (?:exit (\d+)|false)$/.exec(step);
        if (exit) {
          const code = exit[1] ?? '1';
          return this.fail(
            build,
            'COMMAND_EXECUTION_ERROR',
            'Error while executing command: docker build. Reason: exit status 1',
            `step ${index + 1}/${steps.length} \`${step}\` exited with code ${code}`,
          );
        }
        if (Date.now() > deadline || build.buildStatus !== 'IN_PROGRESS') return;
      }
      await this.enter(build, 'POST_BUILD');
      const digest = this.s3.digestOf(`${bucket}/${key.join('/')}`)!;
      this.images.set(`${variables.IMAGE_REPOSITORY}:${variables.IMAGE_TAG}`, digest);
      this.pushToEcr(settings, variables, digest, steps);
      build.exportedEnvironmentVariables.push({ name: 'IMAGE_DIGEST', value: digest });
      await this.enter(build, 'UPLOAD_ARTIFACTS');
      await this.enter(build, 'FINALIZING');
      this.finish(build, 'SUCCEEDED');
    } catch (error) {
      // Stopped or timed out meanwhile: finish() has said so.
      if (!(error instanceof Error && error.message === 'finished')) throw error;
    } finally {
      clearTimeout(timeout);
      this.timers.delete(timeout);
    }
  }

  /**
   * The buildspec's post_build on ECR: the push of the deploy's tag, the image's config carrying
   * the Dockerfile's `ENV`s, and the lifecycle policy its `put-lifecycle-policy` command puts, read
   * from the project's own buildspec, never restated here.
   */
  private pushToEcr(settings: BuildProjectSettings, variables: Record<string, string | undefined>, digest: string, steps: string[]): void {
    if (!this.ecr || !variables.IMAGE_REPOSITORY || !variables.IMAGE_TAG) return;
    const repositoryName = variables.IMAGE_REPOSITORY.slice(variables.IMAGE_REPOSITORY.indexOf('/') + 1);
    const env: Record<string, string> = {};
    for (const step of steps) {
      const assignment = /^ENV (\w+)[= ](.*)$/.exec(step);
      if (assignment) env[assignment[1]!] = assignment[2]!.replace(/^"(.*)"$/, '$1');
    }
    this.ecr.push(repositoryName, variables.IMAGE_TAG, digest, env);
    const spec = JSON.parse(settings.buildSpec) as { phases?: Record<string, { commands?: string[] }> };
    const command = (spec.phases?.post_build?.commands ?? []).find((line) => line.includes('ecr put-lifecycle-policy'));
    const policy = command && /--lifecycle-policy-text '([^']+)'/.exec(command)?.[1];
    if (policy) this.ecr.putLifecyclePolicy(repositoryName, policy);
  }

  private async enter(build: SimBuild, phase: string): Promise<void> {
    if (build.buildStatus !== 'IN_PROGRESS') throw new Error('finished');
    const current = build.phases.at(-1);
    if (current) current.phaseStatus = 'SUCCEEDED';
    build.phases.push({ phaseType: phase });
    build.currentPhase = phase;
    this.publish(build);
    await this.wait(this.options.phaseMs ?? 20);
    if (build.buildStatus !== 'IN_PROGRESS') throw new Error('finished');
  }

  private fail(build: SimBuild, statusCode: string, message: string, failure?: string): void {
    if (build.buildStatus !== 'IN_PROGRESS') return;
    const current = build.phases.at(-1)!;
    current.phaseStatus = 'FAILED';
    current.contexts = [{ statusCode, message }];
    if (failure) build.exportedEnvironmentVariables.push({ name: 'BUILD_FAILURE', value: failure });
    this.finish(build, 'FAILED');
  }

  private finish(build: SimBuild, status: SimBuild['buildStatus']): void {
    if (build.buildStatus !== 'IN_PROGRESS') return;
    build.buildStatus = status;
    const current = build.phases.at(-1);
    if (current && !current.phaseStatus) current.phaseStatus = status === 'SUCCEEDED' ? 'SUCCEEDED' : status;
    build.currentPhase = 'COMPLETED';
    build.phases.push({ phaseType: 'COMPLETED' });
    this.publish(build);
    this.startQueued();
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      this.timers.add(timer);
    });
  }

  /** The project's log group, as wire() names it: CodeBuild's default `/aws/codebuild/<project>`. */
  private log(build: SimBuild, line: string): void {
    build.logs.push(line);
    this.onLogLine(`/aws/codebuild/${build.projectName}`, build.id.split(':')[1]!, line);
  }

  private wire(build: SimBuild): unknown {
    return {
      id: build.id,
      arn: build.arn,
      projectName: build.projectName,
      buildStatus: build.buildStatus,
      currentPhase: build.currentPhase,
      timeoutInMinutes: build.timeoutInMinutes,
      startTime: build.startedAt / 1000,
      environment: {
        type: 'ARM_CONTAINER',
        privilegedMode: true,
        environmentVariables: build.environmentVariables.map((v) => ({ ...v, type: 'PLAINTEXT' })),
      },
      exportedEnvironmentVariables: build.exportedEnvironmentVariables,
      phases: build.phases,
      logs: { groupName: `/aws/codebuild/${build.projectName}`, streamName: build.id.split(':')[1] },
    };
  }

  /** The event EventBridge delivers (https://docs.aws.amazon.com/codebuild/latest/userguide/sample-build-notifications.html). */
  private publish(build: SimBuild): void {
    if (this.eventFaults.lose?.(build)) {
      this.lostEvents.push(`${build.id} ${build.buildStatus} ${build.currentPhase}`);
      return;
    }
    this.events.send(
      JSON.stringify({
        version: '0',
        id: randomUUID(),
        'detail-type': 'CodeBuild Build State Change',
        source: 'aws.codebuild',
        account: ACCOUNT,
        time: new Date().toISOString(),
        region: REGION,
        resources: [build.arn],
        detail: {
          'build-status': build.buildStatus,
          'project-name': build.projectName,
          'build-id': build.arn,
          'current-phase': build.currentPhase,
          'additional-information': {
            'timeout-in-minutes': build.timeoutInMinutes,
            environment: { 'environment-variables': build.environmentVariables.map((v) => ({ ...v, type: 'PLAINTEXT' })) },
            'exported-environment-variables': build.exportedEnvironmentVariables,
            phases: build.phases.map((phase) => ({
              'phase-type': phase.phaseType,
              ...(phase.phaseStatus ? { 'phase-status': phase.phaseStatus } : {}),
              'phase-context': (phase.contexts ?? []).map((context) => `${context.statusCode}: ${context.message}`),
            })),
          },
        },
      }),
      this.eventFaults.delaySeconds ?? 0,
    );
  }
}

/** The regular files of a gzipped tar, by path, as text. */
async function readContext(archive: Buffer): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const reader = extract();
  const done = new Promise<void>((resolve, reject) => {
    reader.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: unknown) => chunks.push(chunk as Buffer));
      stream.on('end', () => {
        if (header.type === 'file') files.set(header.name.replace(/^\.\//, ''), Buffer.concat(chunks).toString('utf8'));
        next();
      });
      stream.resume();
    });
    reader.on('finish', resolve);
    reader.on('error', reject);
  });
  const gunzip = createGunzip();
  gunzip.on('error', (error) => reader.destroy(error));
  Readable.from([archive]).pipe(gunzip).pipe(reader);
  await done;
  return files;
}
