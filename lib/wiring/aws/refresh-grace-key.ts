import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { secretsManagerKey } from '../../aws/secrets-manager-key.js';
import { config } from '../../config.js';
import { fetchedOnce, NO_REFRESH_GRACE, type RefreshGrace } from '../../oauth/refresh-grace.js';

/**
 * Lambda's lib/wiring/refresh-grace-key.ts (see infra/bundling.ts): the key is the Secrets
 * Manager secret the stack keeps (infra/stack.ts), read once per container. Without the secret
 * (a stack that did not set it) the grace is off, as every container must derive alike.
 */
function secretKeptGrace(): RefreshGrace {
  const secretArn = config.REFRESH_GRACE_KEY_SECRET_ARN;
  if (!secretArn) return NO_REFRESH_GRACE;
  return { seconds: config.REFRESH_REUSE_GRACE_SECONDS, key: fetchedOnce(secretsManagerKey(new SecretsManagerClient({}), secretArn)) };
}

/** Marked pure, so bundles that never refresh leave the client out. */
export const refreshGrace: RefreshGrace = /* @__PURE__ */ secretKeptGrace();
