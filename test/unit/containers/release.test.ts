import { describe, expect, it } from 'vitest';
import { digestOf } from '../../../lib/containers/image-location.js';
import { pinnedImage } from '../../../lib/containers/release.js';

const DIGEST = `sha256:${'a'.repeat(64)}`;

describe('pinnedImage', () => {
  it('pins a tagged reference by digest, dropping the tag, so a moved tag changes nothing', () => {
    expect(pinnedImage('localhost/web:1', DIGEST)).toBe(`localhost/web@${DIGEST}`);
    expect(pinnedImage('registry.example:5000/team/app:v2', DIGEST)).toBe(`registry.example:5000/team/app@${DIGEST}`);
    expect(pinnedImage('nginx', DIGEST)).toBe(`nginx@${DIGEST}`);
  });

  it('replaces a digest already there, and leaves the reference alone without a valid digest', () => {
    expect(pinnedImage(`localhost/web@sha256:${'b'.repeat(64)}`, DIGEST)).toBe(`localhost/web@${DIGEST}`);
    expect(pinnedImage('localhost/web:1', null)).toBe('localhost/web:1');
    expect(pinnedImage('localhost/web:1', 'sha256:short')).toBe('localhost/web:1');
  });
});

describe('digestOf', () => {
  it('reads the digest a reference pins, and nothing from a tag', () => {
    expect(digestOf(`localhost/web@${DIGEST}`)).toBe(DIGEST);
    expect(digestOf('localhost/web:1')).toBeNull();
  });
});
