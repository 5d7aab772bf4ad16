import { ConditionalCheckFailedException, DynamoDBClient, GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { SignatureV4 } from '@smithy/signature-v4';
import { createHash, createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sendLean, signedHeaders } from '../../../lib/store/dynamo-lean.js';

const credentials = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  sessionToken: 'session-token',
};

describe('the lean DynamoDB path', () => {
  it('signs a call exactly as the SDK’s Signature Version 4 signer does', async () => {
    const body = JSON.stringify({ TableName: 'table', Key: { pk: { S: 'A#1' }, sk: { S: 'A' } }, ConsistentRead: true });
    const now = new Date('2026-11-28T21:08:00.123Z');
    const ours = signedHeaders({
      host: 'dynamodb.eu-west-1.amazonaws.com',
      operation: 'GetItem',
      body,
      region: 'eu-west-1',
      credentials,
      now,
    });
    const { authorization, ...sent } = ours;
    const signer = new SignatureV4({ service: 'dynamodb', region: 'eu-west-1', credentials, sha256: Sha256, applyChecksum: false });
    const signed = await signer.sign(
      { method: 'POST', protocol: 'https:', hostname: 'dynamodb.eu-west-1.amazonaws.com', path: '/', query: {}, headers: sent, body },
      { signingDate: now },
    );
    expect(authorization).toBe(signed.headers.authorization);
  });

  describe('against a stand-in endpoint', () => {
    const servers: Server[] = [];
    afterEach(() => {
      for (const server of servers.splice(0)) server.close();
    });

    /** A DynamoDB stand-in that answers each request with the next of `answers`, recording what it was sent. */
    async function clientAnswering(answers: Array<{ status: number; body: object }>) {
      const received: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
      const server = createServer((request, response) => {
        let body = '';
        request.on('data', (chunk) => (body += chunk));
        request.on('end', () => {
          received.push({ headers: request.headers, body });
          const answer = answers.shift()!;
          response.writeHead(answer.status, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': `req-${received.length}` });
          response.end(JSON.stringify(answer.body));
        });
      });
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const client = new DynamoDBClient({ region: 'eu-west-1', endpoint, credentials, cacheMiddleware: true });
      sendLean(client, { endpoint });
      return { client, received };
    }

    it('sends the input as DynamoDB’s JSON to its operation and answers its output', async () => {
      const item = { pk: { S: 'A#1' }, n: { N: '3' } };
      const { client, received } = await clientAnswering([{ status: 200, body: { Item: item } }]);
      const input = { TableName: 'table', Key: { pk: { S: 'A#1' } }, ConsistentRead: true };
      const output = await client.send(new GetItemCommand(input));
      expect(output.Item).toEqual(item);
      expect(output.$metadata).toMatchObject({ httpStatusCode: 200, requestId: 'req-1', attempts: 1 });
      expect(JSON.parse(received[0]!.body)).toEqual(input);
      expect(received[0]!.headers['x-amz-target']).toBe('DynamoDB_20120810.GetItem');
      expect(received[0]!.headers['x-amz-security-token']).toBe('session-token');
      expect(received[0]!.headers.authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/dynamodb\/aws4_request, /,
      );
    });

    it('throws a failed condition as the SDK’s exception, with the item it returned', async () => {
      const item = { pk: { S: 'A#1' }, status: { S: 'revoked' } };
      const { client } = await clientAnswering([
        {
          status: 400,
          body: {
            __type: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException',
            message: 'The conditional request failed',
            Item: item,
          },
        },
      ]);
      const failure = await client
        .send(
          new UpdateItemCommand({
            TableName: 'table',
            Key: { pk: { S: 'A#1' } },
            UpdateExpression: 'SET a = :a',
            ExpressionAttributeValues: { ':a': { S: 'b' } },
          }),
        )
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(ConditionalCheckFailedException);
      expect(failure).toMatchObject({
        name: 'ConditionalCheckFailedException',
        $fault: 'client',
        Item: item,
        $metadata: { httpStatusCode: 400 },
      });
    });

    it('tries a throttled or failed call again, up to 3 attempts, as the SDK’s standard retry mode', async () => {
      const { client, received } = await clientAnswering([
        { status: 500, body: { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'boom' } },
        { status: 200, body: { Item: { pk: { S: 'A#1' } } } },
      ]);
      const output = await client.send(new GetItemCommand({ TableName: 'table', Key: { pk: { S: 'A#1' } } }));
      expect(output.$metadata.attempts).toBe(2);
      expect(received).toHaveLength(2);

      const { client: throttled, received: tries } = await clientAnswering(
        Array.from({ length: 3 }, () => ({
          status: 400,
          body: { __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException', message: 'slow down' },
        })),
      );
      await expect(throttled.send(new GetItemCommand({ TableName: 'table', Key: { pk: { S: 'A#1' } } }))).rejects.toMatchObject({
        name: 'ThrottlingException',
        $metadata: { attempts: 3 },
      });
      expect(tries).toHaveLength(3);
    });
  });
});

/** The SDK signer's hash, from Node's crypto. */
class Sha256 {
  private readonly hash;
  constructor(secret?: unknown) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', secret as Uint8Array);
  }
  update(data: unknown): void {
    this.hash.update(data as Uint8Array);
  }
  async digest(): Promise<Uint8Array> {
    return this.hash.digest();
  }
}
