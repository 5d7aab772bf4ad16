import { describe, expect, it } from 'vitest';
import { imageSchema, isImageAllowed } from '../../../lib/containers/workload-rules.js';
import * as z from '../../../lib/zod.js';

const ecr = '123456789012.dkr.ecr.us-east-1.amazonaws.com';

describe('allowedImagePrefixes: a registry host and whole path segments', () => {
  it.each([
    ['public.ecr.aws/myorg', 'public.ecr.aws/myorg/app:1.0', true],
    ['public.ecr.aws/myorg', 'public.ecr.aws/myorg', true],
    ['public.ecr.aws/myorg/', 'public.ecr.aws/myorg/team/app@sha256:' + 'a'.repeat(64), true],
    ['public.ecr.aws/myorg', 'public.ecr.aws/myorg-evil/x', false],
    ['public.ecr.aws/myorg', 'public.ecr.aws/my/org', false],
    [ecr, `${ecr}/web:2`, true],
    [ecr, `${ecr}.attacker.example/x`, false],
    [`${ecr}/team`, `${ecr}/teammate/x`, false],
    ['ghcr.io/acme', 'GHCR.io/acme/web', true],
    ['docker.io/library', 'nginx:alpine', true],
    ['docker.io/library', 'evil/nginx', false],
    ['public.ecr.aws/myorg', 'myorg/app', false],
  ])('%s admits %s: %s', (prefix, image, allowed) => {
    expect(isImageAllowed(image, prefix)).toBe(allowed);
  });

  it('refuses an image outside every prefix with a message naming them', () => {
    const result = z.safeParse(imageSchema(['public.ecr.aws/myorg', ecr]), 'public.ecr.aws/myorg-evil/x');
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe(`must be in one of the allowed registries or paths: public.ecr.aws/myorg, ${ecr}`);
  });
});
