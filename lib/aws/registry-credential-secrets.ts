import type { PullCredentials, RegistryCredentialVault } from '../containers/registry-credentials.js';

/**
 * The Secrets Manager secret that holds a container's registry credentials: `<prefix>/<container id>`.
 * ECS takes a secret's name where it is in the task's Region ("you can use either the full ARN or name
 * of the secret": https://docs.aws.amazon.com/AmazonECS/latest/developerguide/private-auth.html), so
 * a launch names it without looking it up, and the task execution role may read only names under the prefix.
 */
export const registryCredentialSecretName = (prefix: string, containerId: string): string => `${prefix}/${containerId}`;

/** The tag every such secret carries; the execution role reads only secrets with it (infra/constructs/registry-credentials.ts). */
export const REGISTRY_CREDENTIALS_TAG = { key: 'container-hosting:purpose', value: 'registry-credentials' } as const;

/**
 * For a function that launches tasks but never keeps credentials (start, restart, wake, task
 * events): it names the secret, and ECS's pull reads it with the execution role; no function reads it.
 */
export function registryCredentialSecretNames(prefix: string): RegistryCredentialVault {
  const refuse = async (): Promise<never> => {
    throw new Error('This function only names registry credential secrets; it keeps none');
  };
  return {
    save: refuse,
    discard: refuse,
    async pullCredentialsFor(containerId: string): Promise<PullCredentials> {
      return { kind: 'secret', secretName: registryCredentialSecretName(prefix, containerId) };
    },
  };
}
