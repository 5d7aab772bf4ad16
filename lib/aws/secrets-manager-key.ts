import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

/**
 * A key kept in Secrets Manager: the secret's current value (its `AWSCURRENT` version, which
 * GetSecretValue returns when no version is named:
 * https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_GetSecretValue.html), as
 * UTF-8 bytes. The caller fetches it once per container (lib/oauth/refresh-grace.ts).
 */
export function secretsManagerKey(client: SecretsManagerClient, secretArn: string): () => Promise<Uint8Array> {
  return async () => {
    const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: secretArn }));
    if (!SecretString) throw new Error('The refresh grace key secret has no string value');
    return Buffer.from(SecretString, 'utf8');
  };
}
