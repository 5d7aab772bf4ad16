import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { CodeBuildClient } from '@aws-sdk/client-codebuild';
import { CodeBuildLogs } from '../../../lib/aws/codebuild-logs.js';
import { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQSClient } from '@aws-sdk/client-sqs';
import { type BuildEventMessage, buildEventFromMessage, buildStatusFromMessage } from '../../../lib/aws/build-event-messages.js';
import { SqsBuildDeadlines } from '../../../lib/aws/sqs-build-deadlines.js';
import { CodeBuildImageBuilder, type CodeBuildSettings } from '../../../lib/aws/codebuild-image-builder.js';
import { contextKeyOf, S3ContextUploads } from '../../../lib/aws/s3-context-uploads.js';
import type { BuildStatus, DeployRef } from '../../../lib/deploys/builds.js';
import { newId } from '../../../lib/ids.js';
import { runStepReach, synthesizedBuildProject } from '../../support/aws-sim/build-project.js';
import { AwsSim, startAwsSim } from '../../support/aws-sim/index.js';
import { pollUntil } from '../../support/poll.js';
import { buildContextOf } from '../../support/conformance/build-contexts.js';

/*
 * The AWS half of deploys (issue 33, item 6) through the real SDK clients against the simulator:
 * a context uploaded through a presigned PUT (size and expiry enforced by the signature), built by
 * CodeBuild (phases, failures, timeouts, the concurrent-build quota), the image pinned by its ECR
 * digest, and the build's state changes read from the EventBridge → SQS messages.
 */
const credentials = { accessKeyId: 'simulated', secretAccessKey: 'simulated' };
const BUCKET = 'build-contexts';
const settings: CodeBuildSettings = {
  projectName: 'image-builds',
  contextBucket: BUCKET,
  registry: '123456789012.dkr.ecr.us-east-1.amazonaws.com',
  repositoryPrefix: 'container-hosting/builds',
};
let sim: AwsSim;
let s3: S3Client;
let builder: CodeBuildImageBuilder;
let uploads: S3ContextUploads;

beforeAll(async () => {
  // A simulated minute is 200 ms: a 5-minute timeout is a second.
  sim = await startAwsSim({ seed: 5, codebuild: { phaseMs: 10, minuteMs: 200, concurrentBuilds: 2 } });
  const common = { region: 'us-east-1', endpoint: sim.url, credentials, maxAttempts: 1 };
  s3 = new S3Client({ ...common, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED' });
  builder = new CodeBuildImageBuilder(new CodeBuildClient(common), settings);
  uploads = new S3ContextUploads(s3, { bucket: BUCKET, expiresInS: 900 });
});

afterAll(() => sim?.close());

const deployRef = (): DeployRef => ({ accountId: newId(), containerId: newId(), deployId: newId() });

async function upload(
  deploy: DeployRef,
  body: Buffer,
  sizeBytes = body.length,
  target?: Awaited<ReturnType<S3ContextUploads['targetFor']>>,
) {
  const put = target ?? (await uploads.targetFor(deploy, sizeBytes));
  // fetch sets Content-Length itself, from the body.
  return fetch(put.url, { method: 'PUT', body });
}

/** The build's last status as its events tell it, once finished (newest version wins, as the listener applies them). */
const seen: BuildStatus[] = [];
async function finalStatusOf(buildId: string): Promise<BuildStatus> {
  return pollUntil(
    async () => {
      for (let message = sim.buildEventQueue.receive(30_000); message; message = sim.buildEventQueue.receive(30_000)) {
        const status = buildStatusFromMessage(message.body);
        if (status) seen.push(status);
        sim.buildEventQueue.delete(message.receiptHandle!);
      }
      return seen.filter((status) => status.buildId === buildId).sort((a, b) => b.version - a.version)[0];
    },
    (status) => status !== undefined && !['queued', 'building'].includes(status.phase),
    15_000,
  ) as Promise<BuildStatus>;
}

describe('context uploads through a presigned PUT', () => {
  it('take exactly the size signed, once, and are deleted after', async () => {
    const deploy = deployRef();
    const body = await buildContextOf({ Dockerfile: 'FROM scratch\n' });
    const target = await uploads.targetFor(deploy, body.length);

    const longer = await upload(deploy, Buffer.concat([body, Buffer.from('x')]), body.length, target);
    const exact = await upload(deploy, body, body.length, target);

    expect(new URL(target.url).searchParams.get('X-Amz-SignedHeaders')).toContain('content-length');
    expect(target).toMatchObject({ method: 'PUT', headers: { 'Content-Length': String(body.length) } });
    expect(longer.status).toBe(403);
    expect(await longer.text()).toContain('SignatureDoesNotMatch');
    expect(exact.status).toBe(200);
    expect(sim.s3.objects.has(`${BUCKET}/${contextKeyOf(deploy)}`)).toBe(true);
    await uploads.discard(deploy);
    await uploads.discard(deploy);
    expect(sim.s3.objects.has(`${BUCKET}/${contextKeyOf(deploy)}`)).toBe(false);
  });

  it('refuse an upload after the URL expired', async () => {
    const deploy = deployRef();
    const body = await buildContextOf({ Dockerfile: 'FROM scratch\n' });
    const expired = new S3ContextUploads(s3, { bucket: BUCKET, expiresInS: 60, now: () => Date.now() - 120_000 });

    const answer = await upload(deploy, body, body.length, await expired.targetFor(deploy, body.length));

    expect(answer.status).toBe(403);
    expect(await answer.text()).toContain('Request has expired');
  });
});

describe('builds on CodeBuild', () => {
  it('build an uploaded context into an image in the container repository, pinned by its ECR digest, once per deploy', async () => {
    const deploy = deployRef();
    await upload(deploy, await buildContextOf({ Dockerfile: 'FROM scratch\nCOPY app /app\n', app: 'hello' }));

    const { buildId } = await builder.startBuild({ ...deploy, dockerfile: 'Dockerfile', buildArgs: { A: '1 2' }, timeoutS: 600 });
    const again = await builder.startBuild({ ...deploy, dockerfile: 'Dockerfile', buildArgs: { A: '1 2' }, timeoutS: 600 });
    const status = await finalStatusOf(buildId);

    expect(again.buildId).toBe(buildId);
    expect(status).toMatchObject({ ...deploy, buildId, phase: 'succeeded' });
    const repository = `${settings.registry}/${settings.repositoryPrefix}/${deploy.accountId}/${deploy.containerId}`;
    expect(status.image).toBe(`${repository}@${sim.codebuild.images.get(`${repository}:${deploy.deployId}`)}`);
    expect(status.image).toMatch(/@sha256:[0-9a-f]{64}$/);
    expect(await builder.describeBuild(buildId)).toMatchObject({ phase: 'succeeded', image: status.image });
  });

  it('fail naming the failing step and its exit code, a missing Dockerfile, a context that is not a gzipped tar, or a missing upload', async () => {
    const failing = deployRef();
    await upload(failing, await buildContextOf({ Dockerfile: 'FROM scratch\nRUN exit 3\nCOPY a /a\n' }));
    const noDockerfile = deployRef();
    await upload(noDockerfile, await buildContextOf({ 'app.js': '1' }));
    const notTar = deployRef();
    await upload(notTar, Buffer.from('plain text, not gzip'));
    const neverUploaded = deployRef();

    const start = (deploy: DeployRef) => builder.startBuild({ ...deploy, dockerfile: 'Dockerfile', buildArgs: {}, timeoutS: 600 });
    const statuses = await Promise.all(
      [failing, noDockerfile, notTar, neverUploaded].map(async (deploy) => finalStatusOf((await start(deploy)).buildId)),
    );

    expect(statuses.map((status) => status.phase)).toEqual(['failed', 'failed', 'failed', 'failed']);
    expect(statuses[0]!.reason).toBe('step 2/3 `RUN exit 3` exited with code 3');
    expect(statuses[1]!.reason).toBe('no Dockerfile in the context');
    expect(statuses[2]!.reason).toMatch(/^the context is not a gzipped tar/);
    expect(statuses[3]!.reason).toMatch(/^build failed in DOWNLOAD_SOURCE: CLIENT_ERROR: NoSuchKey/);
  });

  it('time out after the deploy timeout, in whole minutes of at least 5, and stop on request', async () => {
    const slow = deployRef();
    await upload(slow, await buildContextOf({ Dockerfile: 'FROM scratch\nRUN sleep 600\n' }));
    const stopped = deployRef();
    await upload(stopped, await buildContextOf({ Dockerfile: 'FROM scratch\nRUN sleep 600\n' }));

    const timedOut = (await builder.startBuild({ ...slow, dockerfile: 'Dockerfile', buildArgs: {}, timeoutS: 60 })).buildId;
    const toStop = (await builder.startBuild({ ...stopped, dockerfile: 'Dockerfile', buildArgs: {}, timeoutS: 600 })).buildId;
    await builder.stopBuild(toStop);
    await builder.stopBuild(toStop);

    expect(await finalStatusOf(timedOut)).toMatchObject({ phase: 'timed_out', reason: 'build timed out after 5 min' });
    expect(await finalStatusOf(toStop)).toMatchObject({ phase: 'stopped' });
  });

  it('queue past the concurrent-build quota and start as running builds finish', async () => {
    const deploys = [deployRef(), deployRef(), deployRef()];
    for (const deploy of deploys) await upload(deploy, await buildContextOf({ Dockerfile: 'FROM scratch\nRUN sleep 30\n' }));

    const ids: string[] = [];
    for (const deploy of deploys)
      ids.push((await builder.startBuild({ ...deploy, dockerfile: 'Dockerfile', buildArgs: {}, timeoutS: 600 })).buildId);
    const third = await builder.describeBuild(ids[2]!);

    expect(third?.phase).toBe('queued');
    expect((await Promise.all(ids.map(finalStatusOf))).map((status) => status.phase)).toEqual(['succeeded', 'succeeded', 'succeeded']);
  });

  it('tell a build whose end event was lost through BatchGetBuilds, when the deadline the builder planned arrives on the same queue', async () => {
    const deploy = deployRef();
    await upload(deploy, await buildContextOf({ Dockerfile: 'FROM scratch\nCOPY app /app\n', app: 'hello' }));
    const deadlines = new SqsBuildDeadlines(
      new SQSClient({ region: 'us-east-1', endpoint: sim.url, credentials, maxAttempts: 1 }),
      sim.buildEventQueue.url,
    );
    // Every event after the build started is lost (EventBridge gave up on its target), none arrives in order.
    sim.codebuild.eventFaults = { lose: (build) => build.currentPhase !== 'QUEUED' };
    try {
      const { buildId } = await builder.startBuild({ ...deploy, dockerfile: 'Dockerfile', buildArgs: {}, timeoutS: 300 });
      await deadlines.checkLater(deploy, 1);

      const messages: BuildEventMessage[] = [];
      await pollUntil(
        async () => {
          for (let message = sim.buildEventQueue.receive(30_000); message; message = sim.buildEventQueue.receive(30_000)) {
            const event = buildEventFromMessage(message.body);
            if (event) messages.push(event);
            sim.buildEventQueue.delete(message.receiptHandle!);
          }
          return messages;
        },
        (seen) => seen.some((event) => event.kind === 'deadline'),
        15_000,
      );

      expect(sim.codebuild.lostEvents.filter((event) => event.startsWith(buildId)).at(-1)).toMatch(/ SUCCEEDED COMPLETED$/);
      expect(
        messages
          .filter((event) => event.kind === 'status' && event.status.buildId === buildId)
          .map((event) => event.kind === 'status' && event.status.phase),
      ).toEqual(['queued']);
      expect(messages.find((event) => event.kind === 'deadline')).toEqual({ kind: 'deadline', ref: deploy });
      expect(await builder.describeBuild(buildId)).toMatchObject({
        ...deploy,
        phase: 'succeeded',
        image: expect.stringMatching(/@sha256:[0-9a-f]{64}$/),
      });
    } finally {
      sim.codebuild.eventFaults = {};
    }
  });

  it('deliver a late event after the build ended, where it changes nothing the described status did not', async () => {
    const deploy = deployRef();
    await upload(deploy, await buildContextOf({ Dockerfile: 'FROM scratch\nRUN exit 4\n' }));
    sim.codebuild.eventFaults = { delaySeconds: 2 };
    try {
      const { buildId } = await builder.startBuild({ ...deploy, dockerfile: 'Dockerfile', buildArgs: {}, timeoutS: 300 });
      const described = await pollUntil(
        () => builder.describeBuild(buildId),
        (status) => status?.phase === 'failed',
        10_000,
      );
      const late = await finalStatusOf(buildId);

      expect(described).toMatchObject({ phase: 'failed', reason: 'step 2/2 `RUN exit 4` exited with code 4' });
      expect(late).toMatchObject({ phase: 'failed', reason: described!.reason, version: described!.version });
    } finally {
      sim.codebuild.eventFaults = {};
    }
  });
});

describe("a RUN step's reach on CodeBuild, from the project as the stack synthesizes it", () => {
  it('gets no AWS credentials: the build runs, and a RUN step asking the credential and metadata endpoints gets nothing', async () => {
    // Prepare
    const deploy = deployRef();
    const probe =
      'RUN wget -qO- http://169.254.170.2$AWS_CONTAINER_CREDENTIALS_RELATIVE_URI; wget -qO- http://169.254.169.254/latest/meta-data/';
    await upload(deploy, await buildContextOf({ Dockerfile: `FROM scratch\n${probe}\n` }));

    // Act
    const status = await finalStatusOf(
      (await builder.startBuild({ ...deploy, dockerfile: 'Dockerfile', buildArgs: {}, timeoutS: 600 })).buildId,
    );

    // Assess
    expect(status.phase).toBe('succeeded');
    const build = sim.codebuild.builds.get(status.buildId)!;
    expect(sim.codebuild.credentialExposures.get(build.id)).toBeUndefined();
    expect(build.logs).toContain('#2 169.254.170.2: connection timed out (no credentials)');
    expect(build.logs).toContain('#2 169.254.169.254: connection timed out (no credentials)');
  });

  it('ends a build failed, naming why, on a project whose buildspec would let a RUN step reach them', async () => {
    // Prepare: the synthesized project, its buildspec changed as a careless edit would change it
    const synthesized = await synthesizedBuildProject();
    const edited = (edit: (commands: string[]) => string[]) => {
      const spec = JSON.parse(synthesized.buildSpec);
      spec.phases.pre_build.commands = edit(spec.phases.pre_build.commands);
      return spec;
    };
    const withoutRules = edited((commands) => commands.filter((command) => !command.startsWith('iptables')));
    const appended = edited((commands) => commands.map((command) => command.replace('iptables -I FORWARD 1', 'iptables -A FORWARD')));
    const hostNetwork = JSON.parse(synthesized.buildSpec);
    hostNetwork.phases.build.commands = hostNetwork.phases.build.commands.map((command: string) =>
      command.replace('docker build ', 'docker build --network host '),
    );

    // Act
    const verdicts = [withoutRules, appended, hostNetwork].map(
      (spec) => runStepReach({ ...synthesized, buildSpec: JSON.stringify(spec) }).reaches['169.254.170.2'],
    );
    // A simulator of its own, without pointing this process's clients at it.
    const refusing = await new AwsSim({
      seed: 6,
      codebuild: { phaseMs: 10, project: async () => ({ ...synthesized, buildSpec: JSON.stringify(withoutRules) }) },
    }).start();
    let status: BuildStatus;
    try {
      const refusingBuilder = new CodeBuildImageBuilder(
        new CodeBuildClient({ region: 'us-east-1', endpoint: refusing.url, credentials, maxAttempts: 1 }),
        settings,
      );
      const { buildId } = await refusingBuilder.startBuild({ ...deployRef(), dockerfile: 'Dockerfile', buildArgs: {}, timeoutS: 600 });
      status = await pollUntil(
        async () => (await refusingBuilder.describeBuild(buildId))!,
        (described) => described.phase === 'failed',
        15_000,
      );
    } finally {
      refusing.close();
    }

    // Assess
    expect(runStepReach(synthesized).reaches).toEqual({ '169.254.170.2': undefined, '169.254.169.254': undefined });
    expect(verdicts).toEqual([
      'no rule before the docker build drops what the build host forwards to it',
      'no rule before the docker build drops what the build host forwards to it',
      'docker build --network host: RUN steps share the build container network, where FORWARD rules do not apply',
    ]);
    expect(status.reason).toMatch(/RUN steps would get AWS credentials \(169\.254\.170\.2: no rule before the docker build/);
  });
});

describe("a build's logs from CloudWatch Logs (GET …/deploys/{id}/logs on AWS)", () => {
  it('read oldest first in pages of `limit` with the forward token as the cursor, from `since` on, and nothing for a build not started', async () => {
    // Prepare: a build of 25 steps, each a line of its log
    const deploy = deployRef();
    const steps = Array.from({ length: 25 }, (_, index) => `RUN echo line ${index + 1}`);
    await upload(deploy, await buildContextOf({ Dockerfile: steps.join('\n') }));
    const { buildId } = await builder.startBuild({ ...deploy, dockerfile: 'Dockerfile', buildArgs: {}, timeoutS: 600 });
    await finalStatusOf(buildId);
    const reader = new CodeBuildLogs(
      new CloudWatchLogsClient({ region: 'us-east-1', endpoint: sim.url, credentials, maxAttempts: 1 }),
      '/aws/codebuild/image-builds',
    );

    // Act
    const pages: Array<Awaited<ReturnType<CodeBuildLogs['read']>>> = [];
    let cursor: string | undefined;
    do {
      const page = await reader.read({ buildId }, { limit: 10, ...(cursor ? { cursor } : {}) });
      pages.push(page);
      cursor = page.nextCursor;
    } while (cursor && pages.length < 10);
    const all = pages.flatMap((page) => page.lines);
    const since = await reader.read({ buildId }, { limit: 100, since: all[12]!.timestamp });
    const notStarted = await reader.read({ buildId: 'image-builds:never-started' }, { limit: 10 });
    const badCursor = await reader.read({ buildId }, { limit: 10, cursor: 'not-a-token' }).catch((error: Error) => error);

    // Assess
    // The end shows only as GetLogEvents answering the token it was sent: one more, empty page without a cursor.
    expect(pages.map((page) => page.lines.length)).toEqual([10, 10, 5, 0]);
    expect(pages.at(-1)!.nextCursor).toBeUndefined();
    expect(all.map((line) => line.message)).toEqual(steps.map((step, index) => `#${index + 1} [${index + 1}/25] ${step}`));
    expect(all[0]).toEqual({ timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), stream: 'stdout', message: expect.any(String) });
    expect(since.lines.length).toBeGreaterThanOrEqual(13);
    expect(since.lines.every((line) => line.timestamp >= all[12]!.timestamp)).toBe(true);
    expect(since.lines.at(-1)!.message).toBe(all.at(-1)!.message);
    expect(notStarted).toEqual({ lines: [] });
    expect(badCursor).toBeInstanceOf(Error);
    expect(String(badCursor)).toMatch(/cursor/);
  });
});
