/**
 * What the simulator's CodeBuild knows of the project: the settings the stack synthesizes for it
 * (infra/constructs/image-builds.ts), read from the template, never restated here; and what a `RUN`
 * step of a user's Dockerfile reaches on a build host set up by that buildspec.
 */
export interface BuildProjectSettings {
  /** Source.BuildSpec: the buildspec as the project holds it (YAML or JSON; ours is JSON). */
  buildSpec: string;
  privilegedMode: boolean;
  /** VpcConfig: a build in the workload VPC would reach its tasks, file systems and endpoints. */
  vpcConfig?: unknown;
}

/**
 * The endpoints that give AWS credentials to whatever reaches them from a CodeBuild build
 * container: the build role's, at 169.254.170.2 under AWS_CONTAINER_CREDENTIALS_RELATIVE_URI, as
 * for an ECS task (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/task-metadata-endpoint-v2.html;
 * a CodeBuild build container is one: https://github.com/mhart/awscred/issues/2), and the instance metadata at 169.254.169.254
 * (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/instancedata-data-retrieval.html).
 */
export const CREDENTIAL_ENDPOINTS = ['169.254.170.2', '169.254.169.254'] as const;

export interface RunStepReach {
  /** Per endpoint: why a RUN step reaches it, or undefined when it does not. */
  reaches: Record<string, string | undefined>;
}

/** The CodeBuild project of the ImageBuilds construct as CloudFormation gets it, in a stack of its own (once per process). */
let synthesized: Promise<BuildProjectSettings> | undefined;
export function synthesizedBuildProject(): Promise<BuildProjectSettings> {
  synthesized ??= (async () => {
    const [{ App, Stack }, iam, sqs, { ImageBuilds }] = await Promise.all([
      import('aws-cdk-lib'),
      import('aws-cdk-lib/aws-iam'),
      import('aws-cdk-lib/aws-sqs'),
      import('../../../infra/constructs/image-builds.js'),
    ]);
    const stack = new Stack(new App(), 'SimulatedImageBuilds', { env: { account: '123456789012', region: 'us-east-1' } });
    const { project } = new ImageBuilds(stack, 'ImageBuilds', {
      cpuArchitecture: 'ARM64',
      deadLetterQueue: new sqs.Queue(stack, 'DeadLetters'),
      executionRole: new iam.Role(stack, 'ExecutionRole', { assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com') }),
    });
    // The project's CloudFormation properties as the template gets them, without synthesizing the whole app (tens of seconds on a busy machine).
    const rendered = stack.resolve((project as unknown as { _toCloudFormation(): object })._toCloudFormation());
    const [resource] = Object.values(rendered.Resources) as Array<{ Type: string; Properties: any }>;
    if (resource?.Type !== 'AWS::CodeBuild::Project') throw new Error(`expected the CodeBuild project, got ${resource?.Type}`);
    const { Source, Environment, VpcConfig } = resource.Properties;
    return { buildSpec: String(Source.BuildSpec), privilegedMode: Environment.PrivilegedMode === true, vpcConfig: VpcConfig };
  })();
  return synthesized;
}

const ipv4 = (address: string): number => address.split('.').reduce((value, part) => value * 256 + Number(part), 0);
const covers = (cidr: string, address: string): boolean => {
  const [base, bits = '32'] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  return Math.floor(ipv4(address) / size) === Math.floor(ipv4(base!) / size);
};

/**
 * What a RUN step reaches, from the buildspec's commands as the build host runs them, in phase
 * order up to the `docker build`. A RUN step's container sits on the docker daemon's bridge, so
 * its packets to the link-local endpoints are forwarded by the build host: a rule put first in
 * FORWARD (or in DOCKER-USER, which docker consults first: https://docs.docker.com/engine/network/packet-filtering-firewalls/)
 * that drops or rejects a destination covering the endpoint keeps it off; a rule appended (`-A`)
 * comes after docker's own ACCEPTs and keeps nothing off. A `docker build --network host` puts
 * RUN steps in the build container's own namespace, whose packets leave through OUTPUT: no
 * FORWARD rule applies there. Without privileged mode there is no docker daemon and no build.
 */
export function runStepReach(project: BuildProjectSettings): RunStepReach {
  const spec = JSON.parse(project.buildSpec) as { phases?: Record<string, { commands?: string[] }> };
  const commands = ['install', 'pre_build', 'build'].flatMap((phase) => spec.phases?.[phase]?.commands ?? []);
  const buildAt = commands.findIndex((command) => /\bdocker build\b/.test(command));
  if (buildAt < 0) throw new Error('the buildspec runs no docker build');
  const before = commands.slice(0, buildAt);
  const dropped = before.flatMap((command) => {
    const rule = /^iptables -I (FORWARD|DOCKER-USER)\b.*?-d (\S+).*-j (DROP|REJECT)\b/.exec(command.trim());
    return rule && !/ ! -d /.test(command) ? [{ cidr: rule[2]!, command: command.trim() }] : [];
  });
  const hostNetwork = /--network[= ]host\b/.test(commands[buildAt]!);
  const reaches: Record<string, string | undefined> = {};
  for (const endpoint of CREDENTIAL_ENDPOINTS) {
    if (hostNetwork)
      reaches[endpoint] = 'docker build --network host: RUN steps share the build container network, where FORWARD rules do not apply';
    else if (!dropped.some((rule) => covers(rule.cidr, endpoint)))
      reaches[endpoint] = 'no rule before the docker build drops what the build host forwards to it';
    else reaches[endpoint] = undefined;
  }
  return { reaches };
}
