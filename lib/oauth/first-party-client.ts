import type { OAuthApp } from './oauth-store.js';

/**
 * The command-line client `container-hosting` (docs/oauth.md, "Device authorization"): a
 * public client with a fixed, documented `client_id`, so the CLI needs no registration. Every
 * stack creates it the first time it asks for a device code, which works the same on
 * `npm start` and on a fresh `cdk deploy` with nothing to run by hand.
 */
export const FIRST_PARTY_CLI_CLIENT_ID = '00000000-0000-7000-8000-00000000c11e';

/** Its name, which no other application may take nor imitate (lib/oauth/reserved-names.ts). */
export const FIRST_PARTY_CLI_NAME = 'container-hosting CLI';

/**
 * The owner of applications no user owns: this CLI, dynamically registered clients and those
 * known by a client metadata document. No user id has this value, so they are in nobody's list
 * and no one can change, rotate or delete them through the API.
 */
export const UNOWNED = '00000000-0000-7000-8000-000000000000';

/**
 * The application record behind it. Its owner is no user (no user id has this value), so it is
 * in nobody's list and no one can change, rotate or delete it through the API.
 */
export function firstPartyCliApp(createdAt: string): OAuthApp {
  return {
    id: '00000000-0000-7000-8000-00000000a11e',
    clientId: FIRST_PARTY_CLI_CLIENT_ID,
    ownerId: UNOWNED,
    name: FIRST_PARTY_CLI_NAME,
    description: "The service's own command-line client, signing in on this computer or a terminal you are using.",
    // Device grant only: with no redirect URI, the authorization endpoint refuses it.
    redirectUris: [],
    tokenEndpointAuthMethod: 'none',
    createdAt,
    updatedAt: createdAt,
  };
}
