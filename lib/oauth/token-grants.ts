import { invalidRequest, unsupportedGrantType } from '../errors.js';
import { METRIC } from '../observability/metric-names.js';
import { countEvent } from '../observability/metrics.js';
import { authenticateClient, type ClientCredentials } from './client-authentication.js';
import type { DeviceCodeGrantStore } from './grants/device-code.js';
import type { TokenGrant, TokenSet } from './grants/grant.js';
import { TOKEN_GRANTS } from './grants/index.js';
import type { TokenGrantStore } from './oauth-store.js';
import type { RefreshGrace } from './refresh-grace.js';

export type { TokenSet } from './grants/grant.js';

/** What the grants are built with: the stores, the refresh retry grace and the clock. */
export interface GrantDependencies {
  tokenGrants: TokenGrantStore;
  deviceCodes: DeviceCodeGrantStore;
  grace?: RefreshGrace;
  now?: () => Date;
}

/** A grant module's class (lib/oauth/grants/): built once per service from the dependencies. */
export type TokenGrantModule = new (dependencies: GrantDependencies) => TokenGrant;

/**
 * The token endpoint (RFC 6749 section 3.2): picks the grant by `grant_type` from the registry
 * (lib/oauth/grants/index.ts), so a new grant is a module there and touches nothing here.
 */
export class TokenGrantService {
  private readonly grants: ReadonlyMap<string, TokenGrant>;

  constructor(
    private readonly dependencies: GrantDependencies,
    grants: ReadonlyArray<TokenGrantModule> = TOKEN_GRANTS,
  ) {
    this.grants = new Map(
      grants.map((Grant) => {
        const grant = new Grant(dependencies);
        return [grant.grantType, grant];
      }),
    );
  }

  /**
   * Client authentication is judged first (401), then the grant (400), the order
   * docs/api-rules.md fixes; a missing or unknown grant type still costs one client lookup.
   * `issuer`: under which the resources a `resource` parameter may name are served (RFC 8707).
   */
  async issueTokens(credentials: ClientCredentials, parameters: Record<string, string>, issuer?: string): Promise<TokenSet> {
    const grantType = parameters.grant_type;
    const grant = grantType === undefined ? undefined : this.grants.get(grantType);
    if (!grant) {
      await authenticateClient(this.dependencies.tokenGrants, credentials, this.dependencies.now?.() ?? new Date());
      if (grantType === undefined) throw invalidRequest('grant_type is required');
      const offered = [...this.grants.keys()];
      throw unsupportedGrantType(`grant_type must be ${offered.slice(0, -1).join(', ')} or ${offered.at(-1)}`);
    }
    const tokens = await grant.issue(credentials, parameters, issuer);
    countEvent(METRIC.tokenGrants, { grantType: grant.name });
    return tokens;
  }
}
