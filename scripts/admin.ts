/**
 * Operator commands against whichever table the environment points at (TABLE_NAME, and
 * DYNAMODB_ENDPOINT for DynamoDB Local; AWS credentials from the usual chain).
 *
 *   npm run admin -- create-user --email ops@example.com [--role admin] [--password-stdin]
 *   npm run admin -- list-users
 *   npm run admin -- reset-password --email a@example.com   # a one-time password, printed once
 *   npm run admin -- disable --email a@example.com
 *   npm run admin -- enable --email a@example.com
 *
 * Without --password-stdin a password is generated and printed once. Passwords are never
 * taken as arguments, where shell history and process listings would keep them.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

// The SDK's notice that it will need Node 22 from 2027; Lambda runs nodejs22.x already.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// DynamoDB Local keeps a database per access key id: `npm start`'s is in DATA_DIR/dynamodb/access-key.
const keyFile = join(process.env.DATA_DIR ?? '.data', 'dynamodb', 'access-key');
/** Set when DynamoDB Local was asked with the key `local` because DATA_DIR held no key: the likely cause of a missing table. */
let missingKeyFile = false;
if (process.env.DYNAMODB_ENDPOINT && !process.env.AWS_ACCESS_KEY_ID && !process.env.AWS_PROFILE) {
  let stackKey: string | undefined;
  try {
    stackKey = readFileSync(keyFile, 'utf8').trim();
  } catch {
    // No npm start data directory: DynamoDB Local's database for the key `local`.
    missingKeyFile = true;
  }
  process.env.AWS_ACCESS_KEY_ID = stackKey || 'local';
  process.env.AWS_SECRET_ACCESS_KEY = 'local';
}

const usage = `usage: npm run admin -- COMMAND
  create-user --email EMAIL [--role user|admin] [--password-stdin]
  list-users
  reset-password --email EMAIL     (prints a one-time password; the next sign-in must replace it)
  disable --email EMAIL            (ends the account's sessions, tokens and authorizations)
  enable --email EMAIL`;

const COMMANDS = ['create-user', 'list-users', 'reset-password', 'disable', 'enable'];

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

async function main(): Promise<number> {
  const parse = () =>
    parseArgs({
      allowPositionals: true,
      options: {
        email: { type: 'string' },
        role: { type: 'string', default: 'user' },
        'password-stdin': { type: 'boolean', default: false },
      },
    });
  let parsedArgs: ReturnType<typeof parse>;
  try {
    parsedArgs = parse();
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n${usage}`);
    return 2;
  }
  const { positionals, values } = parsedArgs;
  const command = positionals[0] ?? '';
  if (!COMMANDS.includes(command) || (command !== 'list-users' && !values.email) || !['user', 'admin'].includes(values.role!)) {
    console.error(usage);
    return 2;
  }
  if (command !== 'create-user') return accountCommand(command, values.email);
  const password = values['password-stdin'] ? await readStdin() : randomBytes(18).toString('base64url');
  const { createUserBody } = await import('../lib/identity/schemas.js');
  const parsed = createUserBody.safeParse({ email: values.email, password, role: values.role });
  if (!parsed.success) {
    console.error(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('\n'));
    return 2;
  }
  const { identityService } = await import('../lib/wiring/identity.js');
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

/** The commands on existing accounts, as an admin's requests do them (lib/identity/identity-service.ts). */
async function accountCommand(command: string, email: string | undefined): Promise<number> {
  const { accountsService } = await import('../lib/wiring/accounts.js');
  if (command === 'list-users') {
    let cursor: string | undefined;
    do {
      const page = await accountsService.listUsers({ limit: 1000, ...(cursor ? { cursor } : {}) });
      for (const user of page.items) {
        const notes = [user.status === 'disabled' ? 'disabled' : '', user.mustChangePassword ? 'must set a new password' : ''].filter(
          Boolean,
        );
        console.log(`${user.email}\t${user.role}\t${user.id}${notes.length > 0 ? `\t${notes.join(', ')}` : ''}`);
      }
      cursor = page.nextCursor;
    } while (cursor);
    return 0;
  }
  const user = await accountsService.findUserByEmail(email!);
  if (!user) {
    console.error(`No user with email ${email}`);
    return 1;
  }
  if (command === 'reset-password') {
    const { temporaryPassword } = await accountsService.resetPassword(user.id);
    console.log(`Reset the password of ${user.email}; their sessions ended. They must choose a new one at their next sign-in.`);
    console.log(`One-time password (shown once): ${temporaryPassword}`);
  } else if (command === 'disable') {
    await accountsService.disableUser(user.id);
    console.log(`Disabled ${user.email}: its sessions ended, its tokens and OAuth authorizations stopped`);
  } else {
    await accountsService.enableUser(user.id);
    console.log(`Enabled ${user.email}: it can sign in again, and its personal access tokens work again`);
  }
  return 0;
}

/** One line an operator can act on, without a stack trace. */
function explain(error: unknown): string {
  const table = process.env.TABLE_NAME || 'container-hosting';
  const where = process.env.DYNAMODB_ENDPOINT ? `DynamoDB at ${process.env.DYNAMODB_ENDPOINT}` : 'DynamoDB';
  if (!(error instanceof Error)) return String(error);
  if (error.name === 'ResourceNotFoundException') {
    // npm start's database is the one for the key in its DATA_DIR: without that key this read another (issue 37).
    if (missingKeyFile) {
      return `Table ${table} not found in ${where}: there is no ${keyFile}, so this read DynamoDB Local's database for the key "local", not npm start's; if npm start runs with another DATA_DIR, run this with the same DATA_DIR (check TABLE_NAME and DYNAMODB_ENDPOINT too)`;
    }
    return `Table ${table} not found in ${where} (check TABLE_NAME and DYNAMODB_ENDPOINT)`;
  }
  // Connection failures from Node's socket layer carry a code; an AggregateError has no message of its own.
  const code = (error as NodeJS.ErrnoException).code ?? (error as { errors?: NodeJS.ErrnoException[] }).errors?.[0]?.code;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ECONNRESET') {
    return `Cannot reach ${where} (${code})${process.env.DYNAMODB_ENDPOINT ? '; is npm start running?' : ''}`;
  }
  return (error.message || error.name).replace(/\s+/g, ' ').trim();
}

try {
  process.exitCode = await main();
} catch (error) {
  console.error(`admin: ${explain(error)}`);
  process.exitCode = 1;
}
