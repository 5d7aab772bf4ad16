import { describe, expect, it } from 'vitest';
import { appUrlFor, loadConfig } from '../../lib/config.js';

describe('loadConfig', () => {
  it('gives every setting its default when the environment sets none', () => {
    expect(loadConfig({})).toMatchObject({
      TABLE_NAME: 'container-hosting',
      AWS_REGION: 'us-east-1',
      ALLOW_INSECURE_REDIRECT_URIS: false,
      START_BUDGET_MS: 25_000,
      CONTAINER_RUNTIME: 'ecs',
      ECS_SUBNET_IDS: [],
      APPS_URL_SCHEME: 'https',
      QUOTA_MAX_CONTAINERS: 20,
      QUOTA_MAX_RUNNING_CPU: 16,
      // The process runtime runs admins' containers only unless the operator trusts every account.
      PROCESS_RUNTIME_TRUSTS_ALL_ACCOUNTS: false,
    });
    expect(loadConfig({}).DYNAMODB_ENDPOINT).toBeUndefined();
  });

  it('reads flags, lists, numbers, choices and URLs', () => {
    const config = loadConfig({
      ALLOW_INSECURE_REDIRECT_URIS: '1',
      ECS_ASSIGN_PUBLIC_IP: 'true',
      PROCESS_RUNTIME_TRUSTS_ALL_ACCOUNTS: 'true',
      ECS_SUBNET_IDS: ' subnet-a, ,subnet-b ',
      START_BUDGET_MS: '1000',
      QUOTA_MAX_RUNNING_CPU: '2.5',
      CONTAINER_RUNTIME: 'local',
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
      APPS_DOMAIN: 'localhost:8080',
    });
    expect(config).toMatchObject({
      ALLOW_INSECURE_REDIRECT_URIS: true,
      ECS_ASSIGN_PUBLIC_IP: true,
      PROCESS_RUNTIME_TRUSTS_ALL_ACCOUNTS: true,
      ECS_SUBNET_IDS: ['subnet-a', 'subnet-b'],
      START_BUDGET_MS: 1000,
      QUOTA_MAX_RUNNING_CPU: 2.5,
      // `local`, the process runtime's old name, still means it.
      CONTAINER_RUNTIME: 'process',
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
    });
    expect(appUrlFor('web', config)).toBe('https://web.localhost:8080/');
  });

  it('names every bad setting in one error, without echoing the values', () => {
    const attempt = () =>
      loadConfig({
        START_BUDGET_MS: '30000',
        QUOTA_MAX_CONTAINERS: '2.5',
        CONTAINER_RUNTIME: 'docker-secret-value',
        DYNAMODB_ENDPOINT: 'not a url',
        ALLOW_INSECURE_REDIRECT_URIS: 'yes',
        PROCESS_RUNTIME_TRUSTS_ALL_ACCOUNTS: 'everyone',
        ECS_TASK_FAMILY: 'has spaces',
        APPS_DOMAIN: 'bad domain',
        TABLE_NAME: 'ab',
      });
    expect(attempt).toThrow(/^Invalid configuration: /);
    const message = (() => {
      try {
        attempt();
        return '';
      } catch (error) {
        return (error as Error).message;
      }
    })();
    for (const name of [
      'START_BUDGET_MS: must be a whole number from 0 to 28000',
      'QUOTA_MAX_CONTAINERS: must be a whole number',
      'CONTAINER_RUNTIME: must be one of ecs, auto, docker, process, local',
      'DYNAMODB_ENDPOINT: must be an absolute URL',
      'ALLOW_INSECURE_REDIRECT_URIS: must be one of true, false, 1, 0',
      'PROCESS_RUNTIME_TRUSTS_ALL_ACCOUNTS: must be one of true, false, 1, 0',
      'ECS_TASK_FAMILY: must match',
      'APPS_DOMAIN: must be a domain name, optionally with a port',
      'TABLE_NAME: must be at least 3 characters long',
    ])
      expect(message).toContain(name);
    expect(message).not.toContain('docker-secret-value');
  });

  it('refuses an empty or non-numeric number instead of reading it as 0', () => {
    expect(() => loadConfig({ QUOTA_MAX_CONTAINERS: '' })).toThrow(/QUOTA_MAX_CONTAINERS/);
    expect(() => loadConfig({ QUOTA_MAX_RUNNING_CPU: 'many' })).toThrow(/QUOTA_MAX_RUNNING_CPU/);
  });
});
