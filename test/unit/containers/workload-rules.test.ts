import { describe, expect, it } from 'vitest';
import type * as z from '../../../lib/zod.js';
import { createContainerBody, updateContainerBody } from '../../../lib/containers/schemas.js';
import { commandSchema, envSchema, imageSchema, portSchema, registryRefusal } from '../../../lib/containers/workload-rules.js';

const issuesOf = (schema: z.ZodMiniType, value: unknown): string[] => {
  const result = schema.safeParse(value);
  return result.success ? [] : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
};

describe('image', () => {
  const anyImage = imageSchema([]);
  it.each([
    'nginx',
    'nginx:1.27-alpine',
    'library/nginx:stable',
    'public.ecr.aws/nginx/nginx:stable-alpine',
    '123456789012.dkr.ecr.eu-west-1.amazonaws.com/team/app:v1',
    'localhost:5000/app',
    `ghcr.io/acme/web@sha256:${'a'.repeat(64)}`,
    `ghcr.io/acme/web:1.0@sha256:${'0'.repeat(64)}`,
  ])('accepts %s', (image) => {
    expect(issuesOf(anyImage, image)).toEqual([]);
  });

  it.each([
    ['empty', ''],
    ['upper case in the repository', 'acme/Web'],
    ['a space', 'nginx latest'],
    ['a shell metacharacter', 'nginx;rm'],
    ['an empty tag', 'nginx:'],
    ['a short digest', 'nginx@sha256:abc'],
    ['a scheme', 'https://ghcr.io/acme/web'],
    ['256 characters', `ghcr.io/${'a'.repeat(248)}`],
  ])('refuses %s', (_what, image) => {
    expect(issuesOf(anyImage, image)).not.toEqual([]);
  });

  it('refuses an image outside the allowed registry prefixes, and accepts one inside', () => {
    const restricted = imageSchema(['123456789012.dkr.ecr.eu-west-1.amazonaws.com/', 'public.ecr.aws/']);
    expect(issuesOf(restricted, 'docker.io/library/nginx')).toEqual([expect.stringMatching(/allowed registries or paths/)]);
    expect(issuesOf(restricted, 'public.ecr.aws/nginx/nginx')).toEqual([]);
  });
});

describe('image, on a deployment that pulls through an ECR cache', () => {
  const messageOf = (image: string) => registryRefusal(image, ['public.ecr.aws', 'quay.io', 'registry.k8s.io']);

  it('admits images of cached registries and of private ECR registries', () => {
    expect(
      ['public.ecr.aws/nginx/nginx-unprivileged:stable-alpine', 'quay.io/a/b', '123456789012.dkr.ecr.eu-west-1.amazonaws.com/app:1'].map(
        messageOf,
      ),
    ).toEqual([undefined, undefined, undefined]);
  });

  it('refuses Docker Hub, in every spelling, naming the setting that adds its credentials', () => {
    for (const image of ['nginx', 'library/nginx:1.27', 'docker.io/user/app:1', 'registry-1.docker.io/user/app']) {
      expect(messageOf(image)).toContain('deployment setting dockerHubCredentialsSecretArn');
    }
  });

  it('refuses GitHub naming its setting, and a registry no setting adds naming what is cached', () => {
    expect(messageOf('ghcr.io/o/r:t')).toContain('githubCredentialsSecretArn');
    expect(messageOf('registry.gitlab.com/g/p')).toBe(
      'is on registry.gitlab.com, which has no ECR pull-through cache rule on this deployment: images come from public.ecr.aws, quay.io, registry.k8s.io or an Amazon ECR registry (push it to ECR, or see docs/deploying.md, "Deploying")',
    );
  });
});

describe('port', () => {
  it.each([1, 80, 8080, 65535])('accepts %i', (port) => expect(issuesOf(portSchema, port)).toEqual([]));
  it.each([0, 65536, -1, 80.5, '80'])('refuses %s', (port) => expect(issuesOf(portSchema, port)).not.toEqual([]));
});

describe('env', () => {
  it('accepts 64 variables with 4096-character values', () => {
    const env = Object.fromEntries(Array.from({ length: 64 }, (_, index) => [`VAR_${index}`, 'x'.repeat(4096)]));
    expect(issuesOf(envSchema, env)).toEqual([]);
  });

  it('refuses a 65th variable', () => {
    const env = Object.fromEntries(Array.from({ length: 65 }, (_, index) => [`VAR_${index}`, '']));
    expect(issuesOf(envSchema, env)).toEqual([': must hold at most 64 variables']);
  });

  it.each([['1ABC'], ['WITH-DASH'], ['WITH SPACE'], ['É'], [`A${'B'.repeat(128)}`]])('refuses the name %s', (name) => {
    expect(issuesOf(envSchema, { [name]: 'v' })).not.toEqual([]);
  });

  it.each([['PORT'], ['CONTAINER_ID'], ['CONTAINER_HOSTNAME'], ['AWS_SECRET_ACCESS_KEY'], ['AWS_REGION'], ['ECS_CONTAINER_METADATA_URI']])(
    'refuses the reserved name %s',
    (name) => {
      expect(issuesOf(envSchema, { [name]: 'v' })).toEqual([
        `${name}: is reserved (PORT, CONTAINER_*, AWS_*, ECS_*): the platform sets it`,
      ]);
    },
  );

  it('refuses a value of 4097 characters and a value that is not a string', () => {
    expect(issuesOf(envSchema, { LONG: 'x'.repeat(4097) })).toEqual(['LONG: must be at most 4096 characters']);
    expect(issuesOf(envSchema, { NUMBER: 1 })).not.toEqual([]);
  });
});

describe('command', () => {
  it('accepts 64 strings of 1024 characters', () => {
    expect(
      issuesOf(
        commandSchema,
        Array.from({ length: 64 }, () => 'x'.repeat(1024)),
      ),
    ).toEqual([]);
  });

  it.each([
    ['an empty array', []],
    ['65 strings', Array.from({ length: 65 }, () => 'x')],
    ['a 1025-character string', ['x'.repeat(1025)]],
    ['a number', ['node', 1]],
    ['a string instead of an array', 'node server.js'],
  ])('refuses %s', (_what, command) => {
    expect(issuesOf(commandSchema, command)).not.toEqual([]);
  });
});

describe('createContainerBody and updateContainerBody', () => {
  it('name the field in every issue', () => {
    expect(issuesOf(createContainerBody, { hostname: 'web', port: 0 })).toEqual([expect.stringMatching(/^port: /)]);
    expect(issuesOf(updateContainerBody, { env: { PORT: '1' } })).toEqual([expect.stringMatching(/^env\.PORT: /)]);
    expect(issuesOf(updateContainerBody, { command: [] })).toEqual([expect.stringMatching(/^command: /)]);
  });

  it('PATCH takes any non-empty subset, and command: null goes back to the image command', () => {
    expect(issuesOf(updateContainerBody, {})).toEqual([expect.stringMatching(/at least one/)]);
    expect(updateContainerBody.parse({ command: null })).toEqual({ command: null });
    expect(updateContainerBody.parse({ memory_mb: 1024, disk_gb: 20 })).toEqual({ memory_mb: 1024, disk_gb: 20 });
    expect(issuesOf(updateContainerBody, { hostname: 'renamed' })).toContainEqual(expect.stringMatching(/hostname/));
  });
});

describe('health_check and restart_policy', () => {
  it('fills the health check defaults (interval 10 s, timeout 2 s, grace 60 s) and takes null', () => {
    expect(createContainerBody.parse({ hostname: 'web', health_check: { path: '/healthz' } })).toMatchObject({
      health_check: { path: '/healthz', interval_s: 10, timeout_s: 2, grace_s: 60 },
      restart_policy: 'on-failure',
    });
    expect(updateContainerBody.parse({ health_check: null })).toEqual({ health_check: null });
    expect(updateContainerBody.parse({ restart_policy: 'always' })).toEqual({ restart_policy: 'always' });
  });

  it.each([
    [{ path: 'healthz' }, /^health_check\.path: must start with \//],
    [{ path: '/a b' }, /^health_check\.path: /],
    [{ path: '/', interval_s: 0 }, /^health_check\.interval_s: must be from 1 to 300/],
    [{ path: '/', interval_s: 301 }, /^health_check\.interval_s: must be from 1 to 300/],
    [{ path: '/', timeout_s: 61 }, /^health_check\.timeout_s: must be from 1 to 60/],
    [{ path: '/', grace_s: -1 }, /^health_check\.grace_s: must be from 0 to 600/],
    [{ path: '/', grace_s: 601 }, /^health_check\.grace_s: must be from 0 to 600/],
    [{ path: '/', interval_s: 1.5 }, /^health_check\.interval_s: must be a whole number of seconds/],
    [{ path: '/', method: 'POST' }, /method/],
  ])('refuses the health check %j', (health_check, message) => {
    expect(issuesOf(updateContainerBody, { health_check })).toEqual([expect.stringMatching(message)]);
  });

  it('refuses a restart policy other than never, on-failure or always', () => {
    expect(issuesOf(updateContainerBody, { restart_policy: 'unless-stopped' })).toEqual([
      'restart_policy: must be one of never, on-failure or always',
    ]);
  });
});

describe('env names that are Object.prototype properties', () => {
  // `__proto__` never reaches the schema: the body parser refuses it (lib/http/middleware/parse-body.ts; test/e2e/container-rules.test.ts).
  it.each(['constructor', 'toString', 'hasOwnProperty', 'valueOf'])('refuses %s with a message naming it', (name) => {
    expect(issuesOf(envSchema, JSON.parse(`{"${name}":"x"}`))).toEqual([
      `${name}: is reserved: names of JavaScript object properties cannot be used`,
    ]);
  });
});
