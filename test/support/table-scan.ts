import { ScanCommand } from '@aws-sdk/lib-dynamodb';

/** Every item of this test file's table, as one string: for checking that no secret is stored. */
export async function wholeTableAsText(): Promise<{ itemCount: number; text: string }> {
  const { documentClient, tableName } = await import('../../lib/store/dynamo.js');
  const items: Array<Record<string, unknown>> = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await documentClient.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: startKey, ConsistentRead: true }));
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return { itemCount: items.length, text: JSON.stringify(items) };
}
