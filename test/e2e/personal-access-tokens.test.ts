import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { asSession, call, errorEnvelope, signedInUser, type SignedInUser } from '../support/api-client.js';
import { useStack } from '../support/local-stack.js';

/** Issue 18 item 4: PAT scopes, and tokens made with tokens die with their creator. */
const stack = useStack();
let owner: SignedInUser;

beforeAll(async () => {
  owner = await signedInUser(stack.baseUrl);
});

interface IssuedToken {
  id: string;
  token: string;
  scopes: string[];
  parent_id: string | null;
  expires_at: string;
}

async function tokenFromSession(body: Record<string, unknown> = {}): Promise<IssuedToken> {
  const response = await call(stack.baseUrl, 'POST', '/api/v1/tokens', { ...asSession(owner), body: { name: 'by session', ...body } });
  expect(response.status).toBe(200);
  return response.body.data;
}

async function tokenFromToken(parent: string, body: Record<string, unknown> = {}): Promise<IssuedToken> {
  const response = await call(stack.baseUrl, 'POST', '/api/v1/tokens', { token: parent, body: { name: 'by token', ...body } });
  expect(response.status).toBe(200);
  return response.body.data;
}

const createContainer = (token: string) =>
  call(stack.baseUrl, 'POST', '/api/v1/containers', { token, body: { hostname: `pat-${randomUUID().slice(0, 8)}` } });

describe('PAT scopes', () => {
  it('keep a read-only token to reading containers: 403 FORBIDDEN on creating one, and on account routes', async () => {
    // Prepare
    const readOnly = await tokenFromSession({ name: 'read-only', scopes: ['containers:read'] });
    // Act
    const list = await call(stack.baseUrl, 'GET', '/api/v1/containers', { token: readOnly.token });
    const create = await createContainer(readOnly.token);
    const mintToken = await call(stack.baseUrl, 'POST', '/api/v1/tokens', { token: readOnly.token, body: { name: 'x' } });
    const listTokens = await call(stack.baseUrl, 'GET', '/api/v1/tokens', { token: readOnly.token });
    const me = await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: readOnly.token });
    // Assess
    expect(readOnly.scopes).toEqual(['containers:read']);
    expect(list.status).toBe(200);
    expect(create).toMatchObject({ status: 403, body: errorEnvelope('FORBIDDEN') });
    expect(create.body.error.message).toContain('containers:write');
    expect(mintToken).toMatchObject({ status: 403, body: errorEnvelope('FORBIDDEN') });
    expect(listTokens).toMatchObject({ status: 403, body: errorEnvelope('FORBIDDEN') });
    expect(me.status).toBe(200);
  });

  it('default to all three, which may create containers and manage tokens; the list shows each token’s scopes', async () => {
    // Prepare
    const full = await tokenFromSession({ name: 'full' });
    const writer = await tokenFromSession({ name: 'writer', scopes: ['containers:write', 'containers:read', 'containers:write'] });
    // Act
    const create = await createContainer(full.token);
    const listed = await call(stack.baseUrl, 'GET', '/api/v1/tokens', { token: full.token });
    // Assess
    expect(full.scopes).toEqual(['containers:read', 'containers:write', 'account']);
    expect(create.status).toBe(200);
    expect(listed.status).toBe(200);
    const byId = new Map(listed.body.data.map((token: { id: string; scopes: string[] }) => [token.id, token.scopes]));
    expect(byId.get(full.id)).toEqual(['containers:read', 'containers:write', 'account']);
    expect(byId.get(writer.id)).toEqual(['containers:read', 'containers:write']);
  });

  it.each([
    ['an empty list', []],
    ['an unknown scope', ['admin']],
    ['a string', 'containers:read'],
  ])('refuses %s of scopes with 400 BAD_REQUEST', async (_case, scopes) => {
    const response = await call(stack.baseUrl, 'POST', '/api/v1/tokens', { ...asSession(owner), body: { name: 'x', scopes } });
    expect(response).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });
  });

  it('give a token made with a token its creator’s scopes at most: by default, and never more when asked', async () => {
    // Prepare
    const parent = await tokenFromSession({ scopes: ['containers:read', 'account'] });
    // Act
    const inherited = await tokenFromToken(parent.token);
    const narrower = await tokenFromToken(parent.token, { scopes: ['containers:read'] });
    const wider = await call(stack.baseUrl, 'POST', '/api/v1/tokens', {
      token: parent.token,
      body: { name: 'wider', scopes: ['containers:read', 'containers:write'] },
    });
    // Assess
    expect(inherited).toMatchObject({ scopes: ['containers:read', 'account'], parent_id: parent.id });
    expect(narrower.scopes).toEqual(['containers:read']);
    expect(wider).toMatchObject({ status: 403, body: errorEnvelope('FORBIDDEN') });
    expect(wider.body.error.message).toContain('containers:write');
    expect((await createContainer(inherited.token)).status).toBe(403);
  });
});

describe('PAT lineage', () => {
  it('stops every token made from a token, however deep, the moment the creator is deleted; others live on', async () => {
    // Prepare: parent → child → grandchild, and an unrelated token of the same user.
    const parent = await tokenFromSession({ name: 'parent' });
    const child = await tokenFromToken(parent.token, { name: 'child' });
    const grandchild = await tokenFromToken(child.token, { name: 'grandchild' });
    const unrelated = await tokenFromSession({ name: 'unrelated' });
    expect((await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: grandchild.token })).status).toBe(200);
    // Act
    const deleted = await call(stack.baseUrl, 'DELETE', `/api/v1/tokens/${parent.id}`, asSession(owner));
    // Assess
    expect(deleted).toMatchObject({ status: 200, body: { data: 'deleted' } });
    for (const dead of [parent, child, grandchild]) {
      expect((await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: dead.token })).status).toBe(401);
    }
    expect((await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: unrelated.token })).status).toBe(200);
    const ids = (await call(stack.baseUrl, 'GET', '/api/v1/tokens', { token: owner.sessionToken })).body.data.map(
      (token: { id: string }) => token.id,
    );
    expect(ids).toContain(unrelated.id);
    expect(ids).not.toContain(child.id);
    expect(ids).not.toContain(grandchild.id);
  });

  it('deleting a child leaves its creator working', async () => {
    const parent = await tokenFromSession();
    const child = await tokenFromToken(parent.token);
    expect((await call(stack.baseUrl, 'DELETE', `/api/v1/tokens/${child.id}`, { token: parent.token })).status).toBe(200);
    expect((await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: child.token })).status).toBe(401);
    expect((await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: parent.token })).status).toBe(200);
  });

  it('lets no child outlive its creator when children are made while the creator is being deleted', async () => {
    // Prepare
    const parent = await tokenFromSession();
    // Act: ten children asked for while the parent's deletion runs.
    const [creations, deletion] = await Promise.all([
      Promise.all(
        Array.from({ length: 10 }, () => call(stack.baseUrl, 'POST', '/api/v1/tokens', { token: parent.token, body: { name: 'racing' } })),
      ),
      call(stack.baseUrl, 'DELETE', `/api/v1/tokens/${parent.id}`, asSession(owner)),
    ]);
    // Assess: whatever was created before the deletion died with it; the rest was refused.
    expect(deletion.status).toBe(200);
    for (const creation of creations) {
      expect([200, 401]).toContain(creation.status);
      if (creation.status === 200) {
        expect((await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: creation.body.data.token })).status).toBe(401);
      }
    }
  });

  it('expires a token made with a token no later than its creator', async () => {
    const parent = await tokenFromSession({ expires_in_days: 2 });
    const child = await tokenFromToken(parent.token, { expires_in_days: 365 });
    expect(child.expires_at).toBe(parent.expires_at);
  });
});

describe('PATs from before scopes', () => {
  it('keep full power', async () => {
    // Prepare: a token as the service stored them before issue 18, without scopes of its own or lineage.
    const { documentClient, tableName } = await import('../../lib/store/dynamo.js');
    const { keys } = await import('../../lib/store/keys.js');
    const { newSecret, sha256Hex } = await import('../../lib/identity/secrets.js');
    const token = newSecret('svpat_');
    const tokenHash = sha256Hex(token);
    const id = randomUUID();
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    await documentClient.send(
      new PutCommand({
        TableName: tableName,
        Item: {
          ...keys.personalAccessToken(owner.userId, id),
          entity: 'personal_access_token',
          id,
          user_id: owner.userId,
          name: 'legacy',
          token_hash: tokenHash,
          created_at: new Date().toISOString(),
          expires_at: expiresAt,
        },
      }),
    );
    await documentClient.send(
      new PutCommand({
        TableName: tableName,
        Item: {
          ...keys.credential(tokenHash),
          entity: 'credential',
          token_hash: tokenHash,
          kind: 'pat',
          user_id: owner.userId,
          role: 'user',
          scopes: ['containers:read', 'containers:write'],
          expires_at: expiresAt,
          token_id: id,
        },
      }),
    );
    // Act
    const child = await call(stack.baseUrl, 'POST', '/api/v1/tokens', { token, body: { name: 'child of legacy' } });
    const listed = await call(stack.baseUrl, 'GET', '/api/v1/tokens', { token });
    // Assess
    expect(child.status).toBe(200);
    expect(child.body.data.scopes).toEqual(['containers:read', 'containers:write', 'account']);
    expect(listed.body.data.find((entry: { id: string }) => entry.id === id).scopes).toEqual([
      'containers:read',
      'containers:write',
      'account',
    ]);
    // And a token made from it still dies with it.
    await call(stack.baseUrl, 'DELETE', `/api/v1/tokens/${id}`, asSession(owner));
    expect((await call(stack.baseUrl, 'GET', '/api/v1/users/me', { token: child.body.data.token })).status).toBe(401);
  });
});

describe('A deeply nested body (issue 32 item 4)', () => {
  it('is answered 400 BAD_REQUEST naming the nesting limit, over HTTP, and mints no token', async () => {
    // Prepare: a 5,000-deep array, 10,000 bytes, well within the 16 KiB a body may have.
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const before = await call(stack.baseUrl, 'GET', '/api/v1/tokens', asSession(owner));
    // Act
    const response = await call(stack.baseUrl, 'POST', '/api/v1/tokens', {
      ...asSession(owner),
      rawBody: deep,
      headers: { ...asSession(owner).headers, 'content-type': 'application/json' },
    });
    const after = await call(stack.baseUrl, 'GET', '/api/v1/tokens', asSession(owner));
    // Assess
    expect(response).toMatchObject({ status: 400, body: errorEnvelope('BAD_REQUEST') });
    expect(response.body.error.message).toBe('The request body nests arrays and objects more than 32 levels deep');
    expect(after.body.data).toEqual(before.body.data);
  });
});
