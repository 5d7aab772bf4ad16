import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { dynamoDbLocalCommand, startDynamoDbLocal } from '../../../lib/local/dynamodb-local.js';
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

