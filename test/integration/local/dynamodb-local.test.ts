import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { stat } from 'node:fs/promises';
import { CreateTableCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
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

/** Whether a TCP connection to address:port opens. */
function opens(address: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: address, port, timeout: 3000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

describe('DynamoDB Local kept to this machine and this OS user (issue 25 item 2)', () => {
  it("listens on 127.0.0.1 only: none of the host's other addresses opens its port", async () => {
    const others = Object.entries(networkInterfaces()).flatMap(([name, addresses]) =>
      (addresses ?? [])
        .filter((address) => !address.internal)
        .map((address) => (address.family === 'IPv6' && address.scopeid ? `${address.address}%${name}` : address.address)),
    );
    expect(others.length).toBeGreaterThan(0);

    const opened = await Promise.all(others.map(async (address) => [address, await opens(address, port)] as const));

    expect(opened.filter(([, open]) => open)).toEqual([]);
    expect(await opens('127.0.0.1', port)).toBe(true);
  });

  it('makes its data directory 0700 and every file in it 0600, an existing 0755 one included, and writes its database 0600', async () => {
    const dataDir = join(await mkdtemp(join(tmpdir(), 'dynamodb-private-')), 'dynamodb');
    await mkdir(dataDir, { mode: 0o755 });
    await chmod(dataDir, 0o755);
    await writeFile(join(dataDir, 'left-by-an-older-version.db'), 'x', { mode: 0o644 });
    const started = await startDynamoDbLocal({ dataDir });
    try {
      const client = new DynamoDBClient({ endpoint: started.endpoint, region: 'us-east-1', credentials: started.credentials });
      await client.send(
        new CreateTableCommand({
          TableName: 'written',
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
          BillingMode: 'PAY_PER_REQUEST',
        }),
      );
      client.destroy();

      const files = await readdir(dataDir);
      expect(files).toContain(`${started.credentials.accessKeyId}_us-east-1.db`);
      expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
      for (const file of files) expect([file, (await stat(join(dataDir, file))).mode & 0o777]).toEqual([file, 0o600]);
    } finally {
      await started.stop();
      await rm(dirname(dataDir), { recursive: true, force: true });
    }
  }, 120_000);
});
