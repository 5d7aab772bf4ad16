/**
 * Operator commands against whichever table the environment points at (TABLE_NAME, and
 * DYNAMODB_ENDPOINT for DynamoDB Local; AWS credentials from the usual chain).
 *
 *   npm run admin -- create-user --email ops@example.com [--role admin] [--password-stdin]
 *
 * Without --password-stdin a password is generated and printed once. Passwords are never
 * taken as arguments, where shell history and process listings would keep them.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';

const usage = 'usage: npm run admin -- create-user --email EMAIL [--role user|admin] [--password-stdin]';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

async function main(): Promise<number> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      email: { type: 'string' },
      role: { type: 'string', default: 'user' },
      'password-stdin': { type: 'boolean', default: false },
    },
  });
  if (positionals[0] !== 'create-user' || !values.email || !['user', 'admin'].includes(values.role!)) {
    console.error(usage);
    return 2;
  }
  const password = values['password-stdin'] ? await readStdin() : randomBytes(18).toString('base64url');
  const { createUserBody } = await import('../lib/identity/schemas.js');
  const parsed = createUserBody.safeParse({ email: values.email, password, role: values.role });
  if (!parsed.success) {
    console.error(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('\n'));
    return 2;
  }
  const { identityService } = await import('../lib/identity/wiring.js');
  const { ConflictError } = await import('../lib/errors.js');
  try {
    const user = await identityService.createUser(parsed.data);
    console.log(`Created ${user.role} ${user.email} (${user.id})`);
    if (!values['password-stdin']) console.log(`Password (shown once): ${password}`);
    return 0;
  } catch (error) {
    if (error instanceof ConflictError) {
      console.error(`A user with email ${parsed.data.email} already exists`);
      return 1;
    }
    throw error;
  }
}

process.exitCode = await main();
