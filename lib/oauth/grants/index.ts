import { AuthorizationCodeGrant } from './authorization-code.js';
import { DeviceCodeGrant } from './device-code.js';
import { RefreshTokenGrant } from './refresh-token.js';

/** The token endpoint's grants, one module each; lib/oauth/token-grants.ts dispatches through this list. */
export const TOKEN_GRANTS = [AuthorizationCodeGrant, RefreshTokenGrant, DeviceCodeGrant] as const;
