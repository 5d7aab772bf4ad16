import { randomBytes } from 'node:crypto';
import { AwsError } from './faults.js';

const REGION = 'us-east-1';
const ACCOUNT = '123456789012';

interface SimSecret {
  arn: string;
  name: string;
  value: string;
  tags: Array<{ Key?: string; Value?: string }>;
  versions: number;
}

/**
 * Secrets Manager as the project calls it (lib/aws/secrets-manager-registry-credentials.ts,
 * lib/aws/secrets-manager-key.ts), over awsJson1_1 (`X-Amz-Target: secretsmanager.*`):
 * CreateSecret refuses a name in use with ResourceExistsException
 * (https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_CreateSecret.html); a secret's
 * ARN is its name plus `-` and six random characters; PutSecretValue makes a new AWSCURRENT
 * version; DeleteSecret with ForceDeleteWithoutRecovery removes it at once, and any call on a
 * secret that does not exist is ResourceNotFoundException
 * (https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_DeleteSecret.html).
 * A secret is found by its name or its full ARN, as Secrets Manager finds it.
 */
export class SecretsManagerSim {
  readonly secrets = new Map<string, SimSecret>();

  handle(action: string, input: any): unknown {
    switch (action) {
      case 'CreateSecret':
        return this.create(input);
      case 'PutSecretValue': {
        const secret = this.find(String(input.SecretId ?? ''));
        secret.value = String(input.SecretString ?? '');
        secret.versions += 1;
        return { ARN: secret.arn, Name: secret.name, VersionId: `v${secret.versions}` };
      }
      case 'GetSecretValue': {
        const secret = this.find(String(input.SecretId ?? ''));
        return { ARN: secret.arn, Name: secret.name, SecretString: secret.value, VersionId: `v${secret.versions}` };
      }
      case 'DeleteSecret': {
        const secret = this.find(String(input.SecretId ?? ''));
        if (!input.ForceDeleteWithoutRecovery)
          throw new AwsError('InvalidParameterException', 'The simulator models only ForceDeleteWithoutRecovery');
        this.secrets.delete(secret.name);
        return { ARN: secret.arn, Name: secret.name, DeletionDate: Date.now() / 1000 };
      }
      default:
        throw new AwsError('InvalidAction', `The simulator does not model ${action}`);
    }
  }

  /** The secret's value by name or ARN, as ECS's pull reads it with the execution role; undefined when there is none. */
  valueOf(nameOrArn: string): string | undefined {
    try {
      return this.find(nameOrArn).value;
    } catch {
      return undefined;
    }
  }

  private create(input: any): unknown {
    const name = String(input.Name ?? '');
    if (!/^[A-Za-z0-9/_+=.@-]{1,512}$/.test(name)) throw new AwsError('ValidationException', 'Invalid name');
    if (this.secrets.has(name))
      throw new AwsError('ResourceExistsException', `The operation failed because the secret ${name} already exists.`);
    const suffix = randomBytes(4).toString('base64url').slice(0, 6);
    const secret: SimSecret = {
      arn: `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:${name}-${suffix}`,
      name,
      value: String(input.SecretString ?? ''),
      tags: input.Tags ?? [],
      versions: 1,
    };
    this.secrets.set(name, secret);
    return { ARN: secret.arn, Name: name, VersionId: 'v1' };
  }

  private find(nameOrArn: string): SimSecret {
    const byName = this.secrets.get(nameOrArn);
    if (byName) return byName;
    for (const secret of this.secrets.values()) if (secret.arn === nameOrArn) return secret;
    throw new AwsError('ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
  }
}
