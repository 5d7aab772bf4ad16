import { describe, expect, it } from 'vitest';
import { keys } from '../../../lib/store/keys.js';

describe('identity keys', () => {
  it('put a user and their personal access tokens in one partition', () => {
    expect(keys.user('u1')).toEqual({ pk: 'USER#u1', sk: 'PROFILE' });
    expect(keys.personalAccessToken('u1', 't1')).toEqual({ pk: 'USER#u1', sk: 'PAT#t1' });
    expect(keys.personalAccessToken('u1', 't1').sk.startsWith(keys.personalAccessTokenPrefix)).toBe(true);
  });

  it('find a credential by its hash and an email by its normalized address', () => {
    expect(keys.credential('abc')).toEqual({ pk: 'CREDENTIAL#abc', sk: 'CREDENTIAL' });
    expect(keys.email('a@example.com')).toEqual({ pk: 'EMAIL#a@example.com', sk: 'EMAIL' });
    expect(keys.loginFailures('a@example.com').pk).toBe('LOGIN_FAILURES#a@example.com');
  });

  it('list every user in the global index', () => {
    expect(keys.allUsers('u1')).toEqual({ gsi2pk: keys.allUsersPartition, gsi2sk: 'USER#u1' });
  });
});
