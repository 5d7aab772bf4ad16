import {
  CreateSecretCommand,
  DeleteSecretCommand,
  PutSecretValueCommand,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import type { PullCredentials, RegistryCredentials, RegistryCredentialVault } from '../containers/registry-credentials.js';
import { REGISTRY_CREDENTIALS_TAG, registryCredentialSecretName } from './registry-credential-secrets.js';

const errorNamed = (error: unknown, name: string): boolean => error instanceof Error && error.name === name;

/**
 * A secret per container, as ECS's private registry authentication reads it: a JSON object with
 * `username` and `password` (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/private-auth.html).
 * Created on the container's create or PATCH, deleted with the container without a recovery
 * window (a deleted container's credentials have no use), tagged so that the task execution role
 * reads only these.
 */
export class SecretsManagerRegistryCredentialVault implements RegistryCredentialVault {
  constructor(
    private readonly client: SecretsManagerClient,
    private readonly prefix: string,
  ) {}

  async save(containerId: string, credentials: RegistryCredentials): Promise<void> {
    const name = registryCredentialSecretName(this.prefix, containerId);
    const SecretString = JSON.stringify({ username: credentials.username, password: credentials.password });
    try {
      await this.client.send(
        new CreateSecretCommand({
          Name: name,
          SecretString,
          Description: 'Registry credentials of one container (written by the service, read by ECS when it pulls)',
          Tags: [
            { Key: REGISTRY_CREDENTIALS_TAG.key, Value: REGISTRY_CREDENTIALS_TAG.value },
            { Key: 'container-id', Value: containerId },
          ],
        }),
      );
    } catch (error) {
      // A PATCH of a container that has credentials: a new version becomes AWSCURRENT
      // (https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_PutSecretValue.html).
      if (!errorNamed(error, 'ResourceExistsException')) throw error;
      await this.client.send(new PutSecretValueCommand({ SecretId: name, SecretString }));
    }
  }

  async pullCredentialsFor(containerId: string): Promise<PullCredentials> {
    return { kind: 'secret', secretName: registryCredentialSecretName(this.prefix, containerId) };
  }

  async discard(containerId: string): Promise<void> {
    try {
      await this.client.send(
        new DeleteSecretCommand({ SecretId: registryCredentialSecretName(this.prefix, containerId), ForceDeleteWithoutRecovery: true }),
      );
    } catch (error) {
      if (!errorNamed(error, 'ResourceNotFoundException')) throw error;
    }
  }
}
