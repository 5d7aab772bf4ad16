import { describe, expect, it } from 'vitest';
import { containerView } from '../../../lib/containers/container.js';
import { createContainerBody, updateContainerBody } from '../../../lib/containers/schemas.js';
import { workloadFromJson, workloadToJson } from '../../../lib/containers/workload.js';
import { nginxWorkload } from '../../support/workloads.js';
import { FARGATE_MAX_MEMORY_MB } from '../../support/fargate-limits.js';

/** The workload as the declaration says it is when nothing is given (lib/containers/workload.ts). */
const defaultWorkload = workloadToJson(workloadFromJson({}));

const parse = (body: unknown) => createContainerBody.safeParse(body);
const issuesOf = (body: unknown): string[] => {
  const result = parse(body);
  return result.success ? [] : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
};

describe('createContainerBody', () => {
  it("fills in the defaults: 1 core, 512 MB, 18 GB, the deployment's image, port 8080, no env, the image's command", () => {
    const result = parse({ hostname: 'web' });
    expect(result.data).toMatchObject({
      cpu_cores: 1,
      memory_mb: 512,
      disk_gb: 18,
      image: 'public.ecr.aws/nginx/nginx-unprivileged:stable-alpine',
      port: 8080,
      env: {},
      command: null,
    });
    // Every other field of the declaration at its fallback, and nothing else.
    expect(result).toEqual({ success: true, data: { hostname: 'web', ...defaultWorkload } });
  });

  it('accepts every field at once', () => {
    const workload = { image: 'ghcr.io/acme/web:1.2', port: 3000, env: { GREETING: 'hi' }, command: ['node', 'server.js'] };
    expect(parse({ hostname: 'big', cpu_cores: 16, memory_mb: 122880, disk_gb: 32, ...workload }).data).toEqual({
      ...defaultWorkload,
      hostname: 'big',
      cpu_cores: 16,
      memory_mb: 122880,
      disk_gb: 32,
      ...workload,
    });
  });

  describe('hostname', () => {
    it.each(['a', '0', 'web-1', 'a1-b2-c3', 'x'.repeat(63), `a${'-'.repeat(61)}b`])('accepts %s', (hostname) => {
      expect(parse({ hostname }).success).toBe(true);
    });

    it.each([
      ['empty', ''],
      ['64 characters', 'x'.repeat(64)],
      ['a leading hyphen', '-web'],
      ['a trailing hyphen', 'web-'],
      ['upper case', 'Web'],
      ['a dot', 'web.example'],
      ['an underscore', 'web_1'],
      ['a space', 'web 1'],
      ['a trailing newline', 'web\n'],
      ['non-ASCII letters', 'wéb'],
    ])('refuses %s', (_what, hostname) => {
      expect(issuesOf({ hostname })).toEqual([expect.stringMatching(/^hostname: /)]);
    });

    it('is required', () => {
      expect(issuesOf({})).toEqual([expect.stringMatching(/^hostname: /)]);
    });

    it('must be a string', () => {
      expect(parse({ hostname: 42 }).success).toBe(false);
    });
  });

  describe('cpu_cores', () => {
    it.each([1, 2, 4, 8, 16])('accepts %i', (cpu_cores) => {
      expect(parse({ hostname: 'web', cpu_cores }).success).toBe(true);
    });

    it.each([0, 3, 32, -1, 1.5, '1', null, true])('refuses %j', (cpu_cores) => {
      expect(issuesOf({ hostname: 'web', cpu_cores })).toEqual(['cpu_cores: must be one of 1, 2, 4, 8 or 16']);
    });
  });

  describe('memory_mb', () => {
    it('accepts the 512 MB minimum', () => {
      expect(parse({ hostname: 'web', memory_mb: 512 }).success).toBe(true);
    });

    it('refuses less than 512 MB', () => {
      expect(issuesOf({ hostname: 'web', memory_mb: 511 })).toEqual([expect.stringMatching(/^memory_mb: /)]);
    });

    it.each(FARGATE_MAX_MEMORY_MB)(
      'accepts the maximum for %i cores (%i MB) and refuses one more, saying the maximum',
      (cpu_cores, max) => {
        expect(parse({ hostname: 'web', cpu_cores, memory_mb: max }).success).toBe(true);

        const issues = issuesOf({ hostname: 'web', cpu_cores, memory_mb: max + 1 });

        expect(issues).toHaveLength(1);
        expect(issues[0]).toMatch(new RegExp(`^memory_mb: must be at most ${max} for ${cpu_cores} CPU cores?$`));
      },
    );

    it.each([1024.5, '1024', null, [1024], Number.NaN])('refuses %j', (memory_mb) => {
      expect(issuesOf({ hostname: 'web', memory_mb })).toEqual([expect.stringMatching(/^memory_mb: /)]);
    });
  });

  describe('disk_gb', () => {
    it.each([18, 19, 20, 21, 32])('accepts %i', (disk_gb) => {
      expect(parse({ hostname: 'web', disk_gb }).success).toBe(true);
    });

    it.each([17, 33, 0, -18, 18.5, '18', null, false])('refuses %j', (disk_gb) => {
      expect(issuesOf({ hostname: 'web', disk_gb })).toEqual([expect.stringMatching(/^disk_gb: /)]);
    });
  });

  it('refuses unknown fields', () => {
    expect(issuesOf({ hostname: 'web', entrypoint: ['sh'] })).toEqual([expect.stringMatching(/entrypoint/)]);
  });
});

describe('registry_credentials', () => {
  it('takes a username and a password on create, and null (forget them) or new ones on PATCH', () => {
    const credentials = { username: 'robot$ci', password: 's3cr3t token' };
    expect(parse({ hostname: 'web', registry_credentials: credentials }).data?.registry_credentials).toEqual(credentials);
    expect(updateContainerBody.safeParse({ registry_credentials: null }).data).toEqual({ registry_credentials: null });
    expect(updateContainerBody.safeParse({ registry_credentials: credentials }).success).toBe(true);
  });

  it('refuses an empty, oversize, multi-line or incomplete pair, and anything else in it, naming the field', () => {
    expect(issuesOf({ hostname: 'web', registry_credentials: { username: '', password: 'p' } })).toEqual([
      'registry_credentials.username: must not be empty',
    ]);
    expect(issuesOf({ hostname: 'web', registry_credentials: { username: 'u', password: 'a\nb' } })).toEqual([
      'registry_credentials.password: must hold no control characters',
    ]);
    expect(issuesOf({ hostname: 'web', registry_credentials: { username: 'u', password: 'p'.repeat(4097) } })).toEqual([
      'registry_credentials.password: must be at most 4096 characters',
    ]);
    expect(issuesOf({ hostname: 'web', registry_credentials: { username: 'u' } })).toEqual([
      expect.stringMatching(/^registry_credentials\.password: /),
    ]);
    expect(issuesOf({ hostname: 'web', registry_credentials: { username: 'u', password: 'p', server: 'x' } })).toEqual([
      expect.stringMatching(/^registry_credentials: .*server/),
    ]);
  });

  it('is answered only as registry_credentials_set, never the credentials', () => {
    const view = containerView({
      id: 'c',
      userId: 'u',
      hostname: 'web',
      ...nginxWorkload(),
      image: 'registry.example.com/app:1',
      restartPolicy: 'never',
      idleTimeoutS: null,
      state: 'stopped',
      stateReason: null,
      restartCount: 0,
      registryCredentialsSet: true,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
    });
    expect(view.registry_credentials_set).toBe(true);
    expect(JSON.stringify(view)).not.toMatch(/password|username/);
  });
});

describe('mounts', () => {
  const volume = '0190f1c2-0000-7000-8000-000000000003';
  const other = '0190f1c2-0000-7000-8000-000000000004';
  const problemsOf = (mounts: unknown) => {
    const parsed = createContainerBody.safeParse({ hostname: 'web', mounts });
    return parsed.success ? [] : parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  };

  it('takes up to 4 volumes at absolute paths that do not overlap', () => {
    expect(
      problemsOf([
        { volume, path: '/data' },
        { volume: other, path: '/srv/cache' },
      ]),
    ).toEqual([]);
  });

  it.each([
    [[{ volume, path: '/' }], 'mounts.0.path'],
    [[{ volume, path: 'data' }], 'mounts.0.path'],
    [[{ volume, path: '/data/../etc' }], 'mounts.0.path'],
    [[{ volume, path: '/proc/x' }], 'mounts.0.path'],
    [
      [
        { volume, path: '/data' },
        { volume: other, path: '/data/sub' },
      ],
      'mounts.1.path: overlaps /data',
    ],
    [
      [
        { volume, path: '/a' },
        { volume, path: '/b' },
      ],
      'mounts.1.volume',
    ],
    [[{ volume: 'not-an-id', path: '/a' }], 'mounts.0.volume'],
  ])('refuses %j, naming %s', (mounts, named) => {
    expect(problemsOf(mounts).join('\n')).toContain(named);
  });

  it('refuses a fifth mount', () => {
    const five = Array.from({ length: 5 }, (_, index) => ({ volume: `0190f1c2-0000-7000-8000-00000000000${index}`, path: `/v${index}` }));
    expect(problemsOf(five).join('\n')).toContain('at most 4 mounts');
  });
});
