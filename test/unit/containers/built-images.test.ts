import { describe, expect, it } from 'vitest';
import { builtImageOwnerOf, builtImageRepositoriesFrom } from '../../../lib/containers/built-images.js';

const repositories = builtImageRepositoriesFrom('123456789012.dkr.ecr.eu-west-1.amazonaws.com/container-hosting/builds')!;
const registry = '123456789012.dkr.ecr.eu-west-1.amazonaws.com';

describe('builtImageOwnerOf', () => {
  it("names the account a build's image belongs to, by tag or by digest", () => {
    expect(builtImageOwnerOf(`${registry}/container-hosting/builds/acct-a/ctr-1:deploy-1`, repositories)).toBe('acct-a');
    expect(builtImageOwnerOf(`${registry}/container-hosting/builds/acct-b/ctr-2@sha256:${'a'.repeat(64)}`, repositories)).toBe('acct-b');
  });

  it('says nothing of images elsewhere: another registry, another path, the prefix alone', () => {
    expect(builtImageOwnerOf('public.ecr.aws/nginx/nginx:1', repositories)).toBeUndefined();
    expect(builtImageOwnerOf(`${registry}/other/acct-a/ctr-1:1`, repositories)).toBeUndefined();
    expect(builtImageOwnerOf(`${registry}/container-hosting/builds:1`, repositories)).toBeUndefined();
    expect(builtImageOwnerOf(`${registry.toUpperCase()}/container-hosting/builds/acct-a/c:1`, repositories)).toBe('acct-a');
  });

  it('reads no setting as nothing built', () => {
    expect(builtImageRepositoriesFrom(undefined)).toBeUndefined();
  });
});
