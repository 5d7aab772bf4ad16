import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SecretsManagerRegistryCredentialVault } from '../aws/secrets-manager-registry-credentials.js';
import { config } from '../config.js';
import type { RegistryCredentialVault } from '../containers/registry-credentials.js';
import { launchRegistryCredentials } from './containers.js';

/**
 * The vault a function that keeps registry credentials uses (create, PATCH, delete; Lambda bundles
 * resolve `#wiring/registry-credentials` to lib/wiring/aws/registry-credentials.ts): Secrets Manager
 * where a secret prefix is set, else the one every local launch reads (lib/wiring/containers.ts).
 */
export const registryCredentialVault: RegistryCredentialVault = config.REGISTRY_CREDENTIALS_SECRET_PREFIX
  ? new SecretsManagerRegistryCredentialVault(
      new SecretsManagerClient({ region: config.AWS_REGION }),
      config.REGISTRY_CREDENTIALS_SECRET_PREFIX,
    )
  : launchRegistryCredentials;
