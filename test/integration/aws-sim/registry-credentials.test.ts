import { DescribeTaskDefinitionCommand } from '@aws-sdk/client-ecs';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { familyOfTaskDefinition, taskFamilyFor } from '../../../lib/aws/ecs-runtime.js';
import { registryCredentialSecretName } from '../../../lib/aws/registry-credential-secrets.js';
import { SecretsManagerRegistryCredentialVault } from '../../../lib/aws/secrets-manager-registry-credentials.js';
import type { TaskLaunch } from '../../../lib/containers/runtime.js';
import { newId } from '../../../lib/ids.js';
import { type AwsSim, startAwsSim } from '../../support/aws-sim/index.js';
import { pollUntil } from '../../support/poll.js';
import { clientsFor, runtimeOn, runtimeSettings } from './support.js';
import { simTaskLaunch } from '../../support/workloads.js';

/*
 * Private images on ECS (issue 33, item 5) through the real SDK clients: a Secrets Manager secret
 * per container, named by the container definition's repositoryCredentials in a family of its own,
 * and the registry's 401 (or the unreadable secret) as the task's stop reason.
 */
const REGISTRY = 'registry.example.com';
const IMAGE = `${REGISTRY}/team/app:1`;
const RIGHT = { username: 'robot', password: 'right-token' };
const PREFIX = 'container-hosting/registry-credentials';
let sim: AwsSim;
let vault: SecretsManagerRegistryCredentialVault;

beforeAll(async () => {
  sim = await startAwsSim({ seed: 3, ecs: { provisioningMs: [20, 40], pendingMs: [20, 40], privateRegistries: { [REGISTRY]: RIGHT } } });
  const client = new SecretsManagerClient({
    region: 'us-east-1',
    endpoint: sim.url,
    credentials: { accessKeyId: 'simulated', secretAccessKey: 'simulated' },
  });
  vault = new SecretsManagerRegistryCredentialVault(client, PREFIX);
});

afterAll(() => sim?.close());

const launchOf = async (containerId: string, withCredentials: boolean): Promise<TaskLaunch> =>
  simTaskLaunch({
    containerId,
    image: IMAGE,
    env: { SIM_BODY: 'private' },
    ...(withCredentials ? { registryCredentials: await vault.pullCredentialsFor(containerId) } : {}),
  });

async function settle(taskArn: string) {
  const runtime = runtimeOn(sim);
  return pollUntil(
    () => runtime.describeTask(taskArn),
    (status) => status?.lastStatus === 'RUNNING' || status?.lastStatus === 'STOPPED',
    8000,
  );
}

describe('a container with registry credentials on ECS', () => {
  it('runs with the right ones, from a task definition of its own that names its secret, not the image cache', async () => {
    const containerId = newId();
    await vault.save(containerId, { username: 'robot', password: 'stale' });
    // A PATCH replaces them: a new version of the same secret.
    await vault.save(containerId, RIGHT);

    const taskArn = await runtimeOn(sim).runTask(await launchOf(containerId, true));
    const status = await settle(taskArn);
    const definition = await clientsFor(sim).ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: status!.taskDefinitionArn! }));

    expect(status?.lastStatus).toBe('RUNNING');
    expect(definition.taskDefinition?.containerDefinitions?.[0]).toMatchObject({
      image: IMAGE,
      repositoryCredentials: { credentialsParameter: registryCredentialSecretName(PREFIX, containerId) },
    });
    expect(familyOfTaskDefinition(status!.taskDefinitionArn!)).not.toBe(
      taskFamilyFor(runtimeSettings.taskDefinitions.familyPrefix, IMAGE, 8080),
    );
    expect([...sim.secretsManager.secrets.values()].find((secret) => secret.name.endsWith(containerId))?.tags).toContainEqual({
      Key: 'container-hosting:purpose',
      Value: 'registry-credentials',
    });
  });

  it('fails with the registry 401 as its reason when they are wrong, and when there are none', async () => {
    const wrong = newId();
    await vault.save(wrong, { username: 'robot', password: 'wrong' });

    const withWrong = await settle(await runtimeOn(sim).runTask(await launchOf(wrong, true)));
    const withNone = await settle(await runtimeOn(sim).runTask(await launchOf(newId(), false)));

    expect(withWrong).toMatchObject({ lastStatus: 'STOPPED', reason: expect.stringMatching(/^image pull failed: .*401 Unauthorized/) });
    expect(withNone).toMatchObject({ lastStatus: 'STOPPED', reason: expect.stringMatching(/^image pull failed: .*401 Unauthorized/) });
    expect(JSON.stringify(withWrong)).not.toContain('wrong');
  });

  it('is deleted with its container: a later launch cannot read the secret and says so', async () => {
    const containerId = newId();
    await vault.save(containerId, RIGHT);
    await vault.discard(containerId);
    await vault.discard(containerId);

    const status = await settle(await runtimeOn(sim).runTask(await launchOf(containerId, true)));

    expect(sim.secretsManager.valueOf(registryCredentialSecretName(PREFIX, containerId))).toBeUndefined();
    expect(status).toMatchObject({
      lastStatus: 'STOPPED',
      reason: expect.stringMatching(/^task could not be set up: .*unable to pull secrets or registry auth/),
    });
  });

  it('refuses credentials given inline: ECS reads them only from Secrets Manager', async () => {
    const launch = { ...(await launchOf(newId(), false)), registryCredentials: { kind: 'inline' as const, ...RIGHT } };
    await expect(runtimeOn(sim).runTask(launch)).rejects.toThrow(/kept in Secrets Manager/);
  });
});
