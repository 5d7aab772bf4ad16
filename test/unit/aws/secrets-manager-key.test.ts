import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { secretsManagerKey } from '../../../lib/aws/secrets-manager-key.js';

const SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:111122223333:secret:RefreshGraceKey-AbCdEf';
const secretsMock = mockClient(SecretsManagerClient);

beforeEach(() => {
  secretsMock.reset();
});

describe('secretsManagerKey', () => {
  it('reads the secret’s current value by its ARN, as UTF-8 bytes', async () => {
    secretsMock.on(GetSecretValueCommand).resolves({ ARN: SECRET_ARN, SecretString: 'x'.repeat(64), VersionStages: ['AWSCURRENT'] });

    const key = await secretsManagerKey(new SecretsManagerClient({ region: 'us-east-1' }), SECRET_ARN)();

    expect(Buffer.from(key).toString('utf8')).toBe('x'.repeat(64));
    expect(secretsMock.calls().map((call) => call.args[0].input)).toEqual([{ SecretId: SECRET_ARN }]);
  });

  it('fails on a secret stored as binary, which it cannot read', async () => {
    // GetSecretValue answers SecretBinary instead of SecretString for a secret stored as binary.
    secretsMock.on(GetSecretValueCommand).resolves({ ARN: SECRET_ARN, SecretBinary: new Uint8Array(32) });

    await expect(secretsManagerKey(new SecretsManagerClient({ region: 'us-east-1' }), SECRET_ARN)()).rejects.toThrow(/no string value/);
    expect(secretsMock.commandCalls(GetSecretValueCommand)).toHaveLength(1);
  });
});
