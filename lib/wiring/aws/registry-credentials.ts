import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SecretsManagerRegistryCredentialVault } from '../../aws/secrets-manager-registry-credentials.js';
import { config } from '../../config.js';
import type { RegistryCredentialVault } from '../../containers/registry-credentials.js';

const prefix = config.REGISTRY_CREDENTIALS_SECRET_PREFIX;
if (!prefix) throw new Error('REGISTRY_CREDENTIALS_SECRET_PREFIX must be set where a function keeps registry credentials');

/** Lambda's lib/wiring/registry-credentials.ts: always Secrets Manager, one client per Lambda container. */
export const registryCredentialVault: RegistryCredentialVault = new SecretsManagerRegistryCredentialVault(
  new SecretsManagerClient({ region: config.AWS_REGION }),
  prefix,
);
