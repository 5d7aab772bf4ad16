import { buildSync } from 'esbuild';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lambdaBundleOptions } from '../../infra/bundling.js';
import { repositoryRoot } from '../../infra/paths.js';

const builds = new Map<string, ReturnType<typeof buildOnce>>();

/** One function's bundle, built as deployed (without the source map), with esbuild's metafile; once per handler for the whole file. */
function build(handler: string) {
  const built = builds.get(handler) ?? buildOnce(handler);
  builds.set(handler, built);
  return built;
}

function buildOnce(handler: string) {
  return buildSync({
    ...lambdaBundleOptions,
    mainFields: [...lambdaBundleOptions.mainFields],
    conditions: [...lambdaBundleOptions.conditions],
    external: [...lambdaBundleOptions.external],
    sourcemap: false,
    entryPoints: [join(repositoryRoot, handler)],
    absWorkingDir: repositoryRoot,
    outdir: join(repositoryRoot, '.lambda-bundles'),
    write: false,
    metafile: true,
  });
}

/** The packages and repository modules a function's bundle is built from, from esbuild's metafile. */
function inputsOf(handler: string, { emittedOnly = false } = {}): string[] {
  return Object.values(build(handler).metafile.outputs).flatMap((output) =>
    Object.entries(output.inputs)
      .filter(([, input]) => !emittedOnly || input.bytesInOutput > 0)
      .map(([name]) => name),
  );
}

/** A function's minified bundle, as deployed. */
const bundleText = (handler: string): string => build(handler).outputFiles.find((file) => file.path.endsWith('.mjs'))!.text;

/** The repository modules that put code into a function's bundle (imported but tree-shaken away does not count). */
const modulesIn = (handler: string) => inputsOf(handler, { emittedOnly: true }).filter((input) => /^(lib|functions)\//.test(input));

const has = (inputs: string[], fragment: string) => inputs.some((input) => input.includes(fragment));

describe('function bundles', () => {
  it('carry only the SDK clients their route calls', () => {
    const metadata = inputsOf('functions/oauth/metadata.ts');
    expect(has(metadata, '@aws-sdk/client-dynamodb')).toBe(false);

    const get = inputsOf('functions/containers/get.ts');
    expect(has(get, '@aws-sdk/client-dynamodb')).toBe(true);
    expect(has(get, '@aws-sdk/client-ecs')).toBe(false);
    expect(has(get, '@aws-sdk/client-cloudwatch')).toBe(false);
    expect(has(get, '@aws-sdk/client-route-53')).toBe(false);

    const start = inputsOf('functions/containers/start.ts');
    expect(has(start, '@aws-sdk/client-ecs')).toBe(true);
    expect(has(start, '@aws-sdk/client-cloudwatch')).toBe(false);
    expect(has(start, '@aws-sdk/client-route-53')).toBe(false);
    // The local runtime stays with the local server.
    expect(has(start, 'lib/local/local-runtime.ts')).toBe(false);
    expect(has(start, 'lib/local/local-metrics.ts')).toBe(false);

    const metrics = inputsOf('functions/containers/get-metrics.ts');
    expect(has(metrics, '@aws-sdk/client-cloudwatch/')).toBe(true);
    expect(has(metrics, '@aws-sdk/client-ecs')).toBe(false);
    expect(has(metrics, '@aws-sdk/client-cloudwatch-logs')).toBe(false);

    // The task state function asks the route writer for route changes (SQS) and relaunches failed
    // tasks by their container's restart policy (ECS), but writes no record itself and reads no
    // metrics; of logs, only the volume chores' `du` line that measures a volume (issue 34).
    const taskState = inputsOf('functions/containers/task-state-changed.ts');
    expect(has(taskState, '@aws-sdk/client-route-53')).toBe(false);
    expect(has(taskState, '@aws-sdk/client-sqs')).toBe(true);
    expect(has(taskState, '@aws-sdk/client-ecs')).toBe(true);
    expect(has(taskState, '@aws-sdk/client-cloudwatch/')).toBe(false);
    expect(has(taskState, '@aws-sdk/client-cloudwatch-logs')).toBe(true);

    // The zone's one writer: Route 53, the table and the probe queue, and no ECS.
    const writer = inputsOf('functions/containers/write-routes.ts');
    const probe = inputsOf('functions/containers/probe-task.ts');
    expect(has(writer, '@aws-sdk/client-route-53')).toBe(true);
    expect(has(writer, '@aws-sdk/client-ecs')).toBe(false);
    expect(has(probe, '@aws-sdk/client-route-53')).toBe(false);

    // The logs route reads CloudWatch Logs, and runs nothing.
    const logs = inputsOf('functions/containers/get-logs.ts');
    expect(has(logs, '@aws-sdk/client-cloudwatch-logs')).toBe(true);
    expect(has(logs, '@aws-sdk/client-ecs')).toBe(false);
    expect(has(logs, '@aws-sdk/client-cloudwatch/')).toBe(false);
    expect(has(logs, 'lib/local/local-logs.ts')).toBe(false);
  });

  it('carry the IAM and EFS clients only in the functions that create and delete volumes', () => {
    for (const handler of ['functions/volumes/create.ts', 'functions/volumes/delete.ts']) {
      const inputs = inputsOf(handler, { emittedOnly: true });
      expect(has(inputs, '@aws-sdk/client-iam'), handler).toBe(true);
      expect(has(inputs, '@aws-sdk/client-efs'), handler).toBe(true);
    }
    for (const handler of ['functions/volumes/list.ts', 'functions/volumes/get.ts', 'functions/volumes/create-snapshot.ts']) {
      const inputs = inputsOf(handler, { emittedOnly: true });
      expect(has(inputs, '@aws-sdk/client-iam'), handler).toBe(false);
      expect(has(inputs, '@aws-sdk/client-efs'), handler).toBe(false);
    }
  });

  it('carry the ECR client only in the functions that list releases, roll back and take deploys live', () => {
    for (const handler of [
      'functions/containers/list-releases.ts',
      'functions/containers/rollback.ts',
      'functions/deploys/build-status-changed.ts',
    ]) {
      expect(has(inputsOf(handler, { emittedOnly: true }), '@aws-sdk/client-ecr'), handler).toBe(true);
    }
    for (const handler of [
      'functions/containers/create.ts',
      'functions/containers/update.ts',
      'functions/containers/get.ts',
      'functions/deploys/create.ts',
    ]) {
      expect(has(inputsOf(handler, { emittedOnly: true }), '@aws-sdk/client-ecr'), handler).toBe(false);
    }
  });

  it('carry only the OAuth concern their route serves', () => {
    const token = modulesIn('functions/oauth/token.ts');
    expect(token).toContain('lib/oauth/token-grants.ts');
    // Every grant of the registry (lib/oauth/grants/index.ts) is in the one function that issues tokens.
    for (const grant of ['authorization-code', 'refresh-token', 'device-code']) expect(token).toContain(`lib/oauth/grants/${grant}.ts`);
    for (const other of [
      'lib/oauth/applications.ts',
      'lib/oauth/authorization.ts',
      'lib/oauth/revocation.ts',
      'lib/store/dynamo-oauth-applications.ts',
      'lib/store/dynamo-oauth-authorization.ts',
      'lib/store/dynamo-oauth-revocation.ts',
      'lib/store/entities/oauth-app.ts',
      'lib/store/entities/oauth-authorization-request.ts',
      'lib/pages/consent-page.ts',
      'lib/oauth/authorized-apps.ts',
      'lib/store/dynamo-oauth-authorized-apps.ts',
    ]) {
      expect(token, other).not.toContain(other);
    }

    const revoke = modulesIn('functions/oauth/revoke-token.ts');
    expect(revoke).toContain('lib/oauth/revocation.ts');
    for (const other of ['lib/oauth/token-grants.ts', 'lib/oauth/applications.ts', 'lib/oauth/authorization.ts', 'lib/oauth/pkce.ts']) {
      expect(revoke, other).not.toContain(other);
    }

    const getApp = modulesIn('functions/oauth/get-app.ts');
    expect(getApp).toContain('lib/oauth/applications.ts');
    for (const other of ['lib/oauth/token-grants.ts', 'lib/oauth/authorization.ts', 'lib/oauth/revocation.ts', 'lib/oauth/pkce.ts']) {
      expect(getApp, other).not.toContain(other);
    }

    const authorizations = modulesIn('functions/authorizations/list.ts');
    expect(authorizations).toContain('lib/oauth/authorized-apps.ts');
    for (const other of [
      'lib/oauth/token-grants.ts',
      'lib/oauth/applications.ts',
      'lib/oauth/revocation.ts',
      'lib/pages/consent-page.ts',
    ]) {
      expect(authorizations, other).not.toContain(other);
    }

    const consent = modulesIn('functions/pages/consent-form.ts');
    expect(consent).toContain('lib/oauth/authorization.ts');
    for (const other of ['lib/oauth/token-grants.ts', 'lib/oauth/applications.ts', 'lib/oauth/revocation.ts']) {
      expect(consent, other).not.toContain(other);
    }
  });

  it('carry the confusables table only in the functions that check an application name', () => {
    // The OAuth pages compose the authorization service, which checks a client metadata document's name when it fetches one.
    for (const handler of [
      'functions/oauth/register-app.ts',
      'functions/oauth/update-app.ts',
      'functions/pages/consent-form.ts',
      'functions/pages/device-page.ts',
    ]) {
      expect(modulesIn(handler), handler).toContain('lib/oauth/confusables-data.ts');
    }
    for (const handler of ['functions/containers/list.ts', 'functions/sessions/create.ts']) {
      expect(modulesIn(handler), handler).not.toContain('lib/oauth/confusables-data.ts');
    }
  });

  it('leave the token grants out of every function that issues no tokens', () => {
    for (const handler of [
      'functions/oauth/revoke-token.ts',
      'functions/oauth/get-app.ts',
      'functions/oauth/device-authorization.ts',
      'functions/authorizations/list.ts',
      'functions/pages/consent-form.ts',
      'functions/pages/device-decision.ts',
    ]) {
      expect(
        modulesIn(handler).filter((input) => input.startsWith('lib/oauth/grants/')),
        handler,
      ).toEqual([]);
    }
  });

  it('take credentials from the environment Lambda sets, without the SDK default chain', () => {
    const token = inputsOf('functions/oauth/token.ts');
    expect(has(token, '@aws-sdk/credential-provider-env')).toBe(true);
    expect(has(token, '@aws-sdk/credential-provider-node')).toBe(false);
    expect(has(token, '@aws-sdk/nested-clients')).toBe(false);
  });

  it('leave out the event-stream codec, which no function uses', () => {
    for (const handler of [
      'functions/containers/create.ts',
      'functions/containers/get-metrics.ts',
      'functions/containers/get-logs.ts',
      'functions/oauth/token.ts',
    ]) {
      const inputs = inputsOf(handler);
      expect(has(inputs, 'submodules/event-streams'), handler).toBe(false);
      expect(has(inputs, 'infra/lambda-no-event-streams.ts'), handler).toBe(true);
    }
  });

  it('validate with zod/mini and its English messages, not classic zod', () => {
    for (const handler of ['functions/containers/create.ts', 'functions/oauth/register-app.ts', 'functions/sessions/create.ts']) {
      const inputs = inputsOf(handler);
      expect(has(inputs, 'zod/v4/mini/'), handler).toBe(true);
      expect(has(inputs, 'zod/v4/classic/'), handler).toBe(false);
      expect(
        inputs.filter((input) => input.includes('zod/v4/locales/')),
        handler,
      ).toEqual([expect.stringContaining('locales/en.js')]);
    }
  });

  it('leave out the endpoint-discovery cache, which no DynamoDB command reads', () => {
    const inputs = inputsOf('functions/oauth/token.ts');
    expect(has(inputs, 'mnemonist'), 'mnemonist').toBe(false);
    expect(has(inputs, 'infra/lambda-no-endpoint-cache.ts')).toBe(true);
  });

  it('carry zod only where a route validates a body or a query, not for reading the configuration', () => {
    for (const handler of ['functions/containers/start.ts', 'functions/containers/task-state-changed.ts', 'functions/oauth/metadata.ts']) {
      expect(has(inputsOf(handler, { emittedOnly: true }), 'node_modules/zod/'), handler).toBe(false);
    }
    expect(has(inputsOf('functions/containers/create.ts', { emittedOnly: true }), 'node_modules/zod/')).toBe(true);
  });

  it('carry their own route row, not the whole table', () => {
    const code = bundleText('functions/containers/get-logs.ts');
    expect(code).toContain("A container's output, oldest first");
    // Every other row, the container routes beside it included, is left out.
    for (const other of [
      'Create a container and start its first task',
      'Sign in with email and password',
      'OAuth 2.0 authorization server metadata',
    ])
      expect(code, other).not.toContain(other);
  });

  it('authenticate without the rest of the identity area (sign-in, users, personal access tokens)', () => {
    const start = modulesIn('functions/containers/start.ts');
    expect(start).toContain('lib/identity/authentication.ts');
    expect(start).toContain('lib/store/dynamo-credential-store.ts');
    expect(start).not.toContain('lib/identity/identity-service.ts');
    expect(start).not.toContain('lib/store/dynamo-identity-store.ts');
    expect(modulesIn('functions/tokens/create.ts')).toContain('lib/identity/identity-service.ts');
  });
});
