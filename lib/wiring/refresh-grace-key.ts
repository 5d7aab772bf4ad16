import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { randomBytes } from 'node:crypto';
import { secretsManagerKey } from '../aws/secrets-manager-key.js';
import { config } from '../config.js';
import { ensureKeyFile } from '../local/refresh-grace-key-file.js';
import { fetchedOnce, type RefreshGrace } from '../oauth/refresh-grace.js';

/**
 * The refresh grace key for the local server and tests (Lambda bundles resolve
 * `#wiring/refresh-grace-key` to lib/wiring/aws/refresh-grace-key.ts): the Secrets Manager secret
 * when one is named, else the file under DATA_DIR the local stack names, else a key of this process
 * alone (DATA_DIR=:memory: and tests), which is enough where one process answers every retry.
 */
function keySource(): () => Promise<Uint8Array> {
  if (config.REFRESH_GRACE_KEY_SECRET_ARN) return secretsManagerKey(new SecretsManagerClient({}), config.REFRESH_GRACE_KEY_SECRET_ARN);
  const keyFile = config.REFRESH_GRACE_KEY_FILE;
  if (keyFile) return () => ensureKeyFile(keyFile);
  return async () => randomBytes(32);
}

const configuredGrace = (): RefreshGrace => ({ seconds: config.REFRESH_REUSE_GRACE_SECONDS, key: fetchedOnce(keySource()) });

export const refreshGrace: RefreshGrace = /* @__PURE__ */ configuredGrace();
