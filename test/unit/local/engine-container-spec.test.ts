import { describe, expect, it } from 'vitest';
import type { TaskLaunch } from '../../../lib/containers/runtime.js';
import { engineContainerSpec, LABEL } from '../../../lib/local/engine-container-spec.js';

const taskArn = 'arn:local:ecs:local:000000000000:task/docker/0123456789abcdef';

const launch = (overrides: Partial<TaskLaunch> = {}): TaskLaunch => ({
  containerId: 'c-1',
  hostname: 'shop',
  image: 'nginx:1.27',
  port: 8080,
  env: { GREETING: 'hello' },
  command: null,
  cpuCores: 0.5,
  memoryMb: 512,
  diskGb: 20,
  healthCheck: null,
  mounts: [],
  clientToken: 'c-1:1',
  ...overrides,
});

describe('the engine container of a task, as the docker runtime creates it', () => {
  it('runs the image with its owner’s env, PORT and CONTAINER_HOSTNAME, on the container’s own network, named and labelled after the task', () => {
    const spec = engineContainerSpec('stack-a', taskArn, launch(), 'container-hosting-c-1', 'bridge');

    expect(spec.name).toBe('container-hosting-0123456789abcdef');
    expect(spec.Image).toBe('nginx:1.27');
    expect(spec.Cmd).toBeUndefined();
    expect(spec.Env).toEqual(['GREETING=hello', 'PORT=8080', 'CONTAINER_HOSTNAME=shop']);
    expect(spec.Labels).toEqual({ [LABEL.stack]: 'stack-a', [LABEL.containerId]: 'c-1', [LABEL.taskId]: '0123456789abcdef' });
    expect(spec.HostConfig?.NetworkMode).toBe('container-hosting-c-1');
  });

  it('publishes the app’s port on 127.0.0.1 only, on a port the engine picks, where the proxy cannot reach the task’s own address', () => {
    const spec = engineContainerSpec('stack-a', taskArn, launch({ port: 3000 }), 'net', 'published-port');

    expect(spec.ExposedPorts).toEqual({ '3000/tcp': {} });
    expect(spec.HostConfig?.PortBindings).toEqual({ '3000/tcp': [{ HostIp: '127.0.0.1', HostPort: '' }] });
  });

  it('publishes no port where the proxy reaches the task at its address on a bridge of this machine', () => {
    const spec = engineContainerSpec('stack-a', taskArn, launch({ port: 3000 }), 'net', 'bridge');

    expect(spec.ExposedPorts).toEqual({ '3000/tcp': {} });
    expect(spec.HostConfig?.PortBindings).toBeUndefined();
  });

  it('gives the size as limits: CPU in nano-CPUs, memory without swap beyond it, a pid limit', () => {
    const { HostConfig } = engineContainerSpec('stack-a', taskArn, launch({ cpuCores: 1.5, memoryMb: 1024 }), 'net', 'bridge');

    expect(HostConfig?.NanoCpus).toBe(1_500_000_000);
    expect(HostConfig?.Memory).toBe(1024 * 1024 * 1024);
    expect(HostConfig?.MemorySwap).toBe(1024 * 1024 * 1024);
    expect(HostConfig?.PidsLimit).toBe(512);
  });

  it('gives nothing of the host: no privileges, every capability dropped but a web server’s few, no privilege gain, no path bound, no engine restarts', () => {
    const { HostConfig } = engineContainerSpec('stack-a', taskArn, launch(), 'net', 'bridge');

    expect(HostConfig?.Privileged).toBe(false);
    expect(HostConfig?.CapDrop).toEqual(['ALL']);
    expect(HostConfig?.CapAdd).toEqual(['CHOWN', 'FOWNER', 'SETUID', 'SETGID', 'NET_BIND_SERVICE', 'KILL']);
    expect(HostConfig?.SecurityOpt).toEqual(['no-new-privileges']);
    expect(HostConfig?.Binds).toEqual([]);
    expect(HostConfig?.RestartPolicy).toEqual({ Name: 'no' });
  });

  it('mounts only the engine volumes the launch names, and runs `command` as the CMD when given', () => {
    const spec = engineContainerSpec(
      'stack-a',
      taskArn,
      launch({
        command: ['node', 'server.js'],
        mounts: [{ volumeId: 'v-1', path: '/data', backendRef: 'container-hosting-v-1' }],
      }),
      'net',
      'bridge',
    );

    expect(spec.Cmd).toEqual(['node', 'server.js']);
    expect(spec.HostConfig?.Mounts).toEqual([{ Type: 'volume', Source: 'container-hosting-v-1', Target: '/data' }]);
  });

  it('makes the same spec from the same launch: a spare made ahead is the task’s own', () => {
    expect(engineContainerSpec('stack-a', taskArn, launch(), 'net', 'bridge')).toEqual(
      engineContainerSpec('stack-a', taskArn, launch(), 'net', 'bridge'),
    );
  });
});
