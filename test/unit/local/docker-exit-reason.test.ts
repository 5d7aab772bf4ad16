import { describe, expect, it } from 'vitest';
import { exitReason } from '../../../lib/local/docker-runtime.js';

describe('why a container on the engine ended, when nobody asked it to stop', () => {
  it('says out of memory, with the limit, when the engine marks the OOM kill (Docker)', () => {
    expect(exitReason(true, 137, 1024)).toBe('out of memory (limit 1024 MB)');
  });

  it('says a SIGKILL was most likely the memory limit when the engine reports only exit code 137 (Podman 4.3)', () => {
    expect(exitReason(false, 137, 512)).toBe('killed (exit code 137: most likely out of memory, limit 512 MB)');
  });

  it('gives any other exit code as it is', () => {
    expect(exitReason(false, 3, 512)).toBe('exited with code 3');
    expect(exitReason(undefined, 0, 512)).toBe('exited with code 0');
  });
});
