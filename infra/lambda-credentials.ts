import { fromEnv } from '@aws-sdk/credential-provider-env';

/**
 * What Lambda bundles get in place of `@aws-sdk/credential-provider-node` (see
 * infra/bundling.ts): the SDK clients call `defaultProvider(init)` for their credentials, and in
 * Lambda those are always the execution role's, in the environment.
 */
export const defaultProvider = (init: Parameters<typeof fromEnv>[0] = {}): ReturnType<typeof fromEnv> => fromEnv(init);
