import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { stat } from 'node:fs/promises';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { dynamoDbLocalCommand, localAccessKey, startDynamoDbLocal } from '../../../lib/local/dynamodb-local.js';
import { isRunning } from '../../support/processes.js';

/*
 * The DynamoDB Local this test run shares (test/support/global-dynamodb.ts starts it with
 * startDynamoDbLocal, as npm start does), inspected as the OS sees it.
 */
const endpoint = inject('dynamoDbEndpoint');
const port = Number(new URL(endpoint).port);

async function javaProcessOnPort(): Promise<{ pid: number; args: string }> {
  const { stdout } = await promisify(execFile)('ps', ['-e', '-o', 'pid=,args=']);
  const line = stdout.split('\n').find((candidate) => candidate.includes('DynamoDBLocal.jar') && candidate.includes(`-port ${port} `));
  if (!line) throw new Error(`No DynamoDB Local process with -port ${port}`);
  const [, pid, args] = /^\s*(\d+)\s+(.*)$/.exec(line)!;
  return { pid: Number(pid), args: args! };
}

describe('DynamoDB Local as the local stack starts it', () => {
  it('runs with telemetry off, by flag and by environment', async () => {
    const java = await javaProcessOnPort();

    expect(java.args.split(' ')).toContain('-disableTelemetry');
    const environment = (await readFile(`/proc/${java.pid}/environ`, 'utf8')).split('\0');
    expect(environment).toContain('DDB_LOCAL_TELEMETRY=0');
  });

  it('answers no browser origin: a cross-origin preflight gets no Access-Control-Allow-Origin', async () => {
    const preflight = await fetch(endpoint, {
      method: 'OPTIONS',
      headers: {
        Origin: 'http://localhost:5173',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization,content-type,x-amz-target',
      },
    });

    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    expect((await javaProcessOnPort()).args).toMatch(/-cors http:\/\/\S+\.invalid(\s|$)/);
  });

  it('keeps data in memory without a data directory and in a file with one', () => {
    expect(dynamoDbLocalCommand(8000, undefined).args).toContain('-inMemory');
    const onDisk = dynamoDbLocalCommand(8000, '/tmp/db').args;
    expect(onDisk.slice(onDisk.indexOf('-dbPath'), onDisk.indexOf('-dbPath') + 2)).toEqual(['-dbPath', '/tmp/db']);
    expect(onDisk).not.toContain('-inMemory');
  });
});

describe('DynamoDB Local namespaced by a random access key (issue 7 item 2)', () => {
  const tablesSeenWith = async (accessKeyId: string): Promise<string[]> => {
    const client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId, secretAccessKey: 'anything' } });
    try {
      return (await client.send(new ListTablesCommand({}))).TableNames ?? [];
    } finally {
      client.destroy();
    }
  };

  it('runs without -sharedDb, so a client that does not know the access key id sees none of the tables', async () => {
    expect((await javaProcessOnPort()).args.split(' ')).not.toContain('-sharedDb');
    expect(dynamoDbLocalCommand(8000, '/tmp/db').args).not.toContain('-sharedDb');
    // This file's table was made with the test run's key (setup-env); a stranger's key sees another database.
    expect(await tablesSeenWith(process.env.AWS_ACCESS_KEY_ID!)).toContain(process.env.TABLE_NAME);
    expect(await tablesSeenWith('strangerOnTheNetwork')).not.toContain(process.env.TABLE_NAME);
  });

  it('keeps a random access key id in the data directory, mode 0600, the same on every start', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'dynamodb-key-'));
    try {
      const first = await localAccessKey(dataDir);
      expect(first.accessKeyId).toMatch(/^[A-Za-z0-9]{32,}$/);
      expect((await stat(join(dataDir, 'access-key'))).mode & 0o777).toBe(0o600);
      expect(await localAccessKey(dataDir)).toEqual(first);
      const other = await mkdtemp(join(tmpdir(), 'dynamodb-key-'));
      expect((await localAccessKey(other)).accessKeyId).not.toBe(first.accessKeyId);
      await rm(other, { recursive: true, force: true });
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('moves a database an earlier -sharedDb run kept to the new key', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'dynamodb-key-'));
    try {
      await writeFile(join(dataDir, 'shared-local-instance.db'), 'old data');
      const { accessKeyId } = await localAccessKey(dataDir);
      expect(await readFile(join(dataDir, `${accessKeyId}_us-east-1.db`), 'utf8')).toBe('old data');
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('startDynamoDbLocal on a data directory', () => {
  it('refuses a directory whose DynamoDB Local another running stack started', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'dynamodb-in-use-'));
    // As that stack recorded it: its DynamoDB Local (here: the one this test run shares) and itself.
    const { pid } = await javaProcessOnPort();
    await writeFile(join(dataDir, 'dynamodb-local.pid'), `${pid}\n${process.ppid}\n`);

    await expect(startDynamoDbLocal({ dataDir })).rejects.toThrow(`${dataDir} is in use by another local stack (process ${process.ppid})`);

    expect(isRunning(pid)).toBe(true);
    await rm(dataDir, { recursive: true, force: true });
  });
});
