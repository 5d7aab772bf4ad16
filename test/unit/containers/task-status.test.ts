import { describe, expect, it } from 'vitest';
import type { TaskStatus } from '../../../lib/containers/runtime.js';
import { containerStateFor } from '../../../lib/containers/task-status.js';

const status = (change: Partial<TaskStatus>): TaskStatus => ({
  taskArn: 'arn:aws:ecs:us-east-1:123456789012:task/c/t',
  containerId: '0190a3e4-5b6c-7d8e-9f01-23456789abcd',
  version: 1,
  lastStatus: 'PENDING',
  desiredStatus: 'RUNNING',
  ...change,
});

describe('containerStateFor', () => {
  it('makes a running task a running container', () => {
    expect(containerStateFor(status({ lastStatus: 'RUNNING', startedAt: '2025-01-01T00:00:00Z' }))).toBe('running');
  });

  it.each(['PROVISIONING', 'PENDING', 'ACTIVATING', 'DEACTIVATING', 'STOPPING', 'DEPROVISIONING'])(
    'changes nothing for a task that is %s',
    (lastStatus) => {
      expect(containerStateFor(status({ lastStatus }))).toBeUndefined();
    },
  );

  it('fails a container whose task stopped before it ever ran', () => {
    expect(containerStateFor(status({ lastStatus: 'STOPPED', desiredStatus: 'STOPPED', stopCode: 'EssentialContainerExited' }))).toBe(
      'failed',
    );
  });

  it('fails a container whose task failed to start', () => {
    expect(containerStateFor(status({ lastStatus: 'STOPPED', desiredStatus: 'STOPPED', stopCode: 'TaskFailedToStart' }))).toBe('failed');
  });

  it('fails a container whose running task stopped without anyone asking', () => {
    const stopped = status({
      lastStatus: 'STOPPED',
      desiredStatus: 'STOPPED',
      startedAt: '2025-01-01T00:00:00Z',
      stopCode: 'EssentialContainerExited',
    });

    expect(containerStateFor(stopped)).toBe('failed');
  });

  it.each([undefined, '2025-01-01T00:00:00Z'])(
    'stops a container whose task someone stopped with StopTask (started at %s)',
    (startedAt) => {
      const stopped = status({
        lastStatus: 'STOPPED',
        desiredStatus: 'STOPPED',
        stopCode: 'UserInitiated',
        ...(startedAt ? { startedAt } : {}),
      });

      expect(containerStateFor(stopped)).toBe('stopped');
    },
  );
});
