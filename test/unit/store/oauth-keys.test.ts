import { describe, expect, it } from 'vitest';
import { keys } from '../../../lib/store/keys.js';

describe('OAuth keys', () => {
  it('find an application by id and by client id, in separate items', () => {
    expect(keys.oauthApp('a1')).toEqual({ pk: 'OAUTH_APP#a1', sk: 'OAUTH_APP' });
    expect(keys.oauthClient('c1')).toEqual({ pk: 'OAUTH_CLIENT#c1', sk: 'OAUTH_CLIENT' });
  });

  it("list a user's applications in the owner index", () => {
    expect(keys.oauthAppOfOwner('u1', 'a1')).toEqual({ gsi1pk: 'OWNER#u1#OAUTH_APP', gsi1sk: 'OAUTH_APP#a1' });
    expect(keys.oauthAppsOfOwnerPartition('u1')).toBe(keys.oauthAppOfOwner('u1', 'a1').gsi1pk);
  });

  it("put an application's grants and codes in the application's partition", () => {
    const partition = keys.oauthAppPartition('a1');
    expect(keys.oauthApp('a1').pk).toBe(partition);
    expect(keys.appGrant('a1', 'g1')).toEqual({ pk: partition, sk: 'OAUTH_GRANT#g1' });
    expect(keys.appAuthorizationCode('a1', 'h1')).toEqual({ pk: partition, sk: 'OAUTH_CODE#h1' });
    expect(keys.appGrant('a1', 'g1').sk.startsWith(keys.appGrantPrefix)).toBe(true);
    expect(keys.appAuthorizationCode('a1', 'h1').sk.startsWith(keys.appAuthorizationCodePrefix)).toBe(true);
    expect(keys.oauthApp('a1').sk.startsWith(keys.appGrantPrefix)).toBe(false);
  });

  it("list a user's grants in the owner index, apart from their applications", () => {
    expect(keys.grantOfUser('u1', 'g1')).toEqual({ gsi1pk: 'OWNER#u1#OAUTH_GRANT', gsi1sk: 'OAUTH_GRANT#g1' });
    expect(keys.grantsOfUserPartition('u1')).toBe(keys.grantOfUser('u1', 'g1').gsi1pk);
    expect(keys.grantsOfUserPartition('u1')).not.toBe(keys.oauthAppsOfOwnerPartition('u1'));
  });

  it('find a grant by its id, which the tokens carry', () => {
    expect(keys.grant('g1')).toEqual({ pk: 'OAUTH_GRANT#g1', sk: 'OAUTH_GRANT' });
  });

  it('find pending requests and codes by id or hash', () => {
    expect(keys.authorizationRequest('q1')).toEqual({ pk: 'OAUTH_REQUEST#q1', sk: 'OAUTH_REQUEST' });
    expect(keys.authorizationCode('h1')).toEqual({ pk: 'OAUTH_CODE#h1', sk: 'OAUTH_CODE' });
  });
});
