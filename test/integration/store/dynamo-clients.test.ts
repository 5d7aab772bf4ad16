import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { newId } from '../../../lib/ids.js';
import { batchGet, documentClient, tableName } from '../../../lib/store/dynamo.js';

/*
 * The stores use two DynamoDB clients (lib/store/dynamo.ts): the document client, and a client
 * with cached middleware whose callers marshal their own values. The document client writes its
 * defaults into the marshalling options it is given; the other client must not see them.
 */
describe('the two DynamoDB clients', () => {
  it('reads items with BatchGetItem after the document client has written and read them', async () => {
    const first = { pk: `TEST#${newId()}`, sk: 'TEST', note: 'first', nested: { list: ['a'] } };
    const second = { pk: `TEST#${newId()}`, sk: 'TEST', note: 'second' };
    for (const item of [first, second]) await documentClient.send(new PutCommand({ TableName: tableName, Item: item }));
    const { Item } = await documentClient.send(new GetCommand({ TableName: tableName, Key: { pk: first.pk, sk: first.sk } }));
    expect(Item).toEqual(first);

    const found = await batchGet([
      { pk: first.pk, sk: first.sk },
      { pk: second.pk, sk: second.sk },
      { pk: `TEST#${newId()}`, sk: 'TEST' },
    ]);

    expect([...found.values()].sort((a, b) => String(a.note).localeCompare(String(b.note)))).toEqual([first, second]);
  });
});
