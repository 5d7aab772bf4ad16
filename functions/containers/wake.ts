import { SecretsManagerClient, GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import middy from '@middy/core';
import type { Context, LambdaFunctionURLEvent, LambdaFunctionURLResult } from 'aws-lambda';
import { containerRuntime, runPolicy } from '#wiring/container-runtime';
import { answerWakeRequest } from '../../lib/aws/wake-endpoint.js';
import { config } from '../../lib/config.js';
import { describeError, log, withInvocationLog } from '../../lib/log.js';
import { deferredWork } from '../../lib/wiring/deferred-work.js';
import { wakeEndpointWith } from '../../lib/wiring/wake.js';

const secrets = new SecretsManagerClient({});

const endpoint = wakeEndpointWith({
  runtime: containerRuntime,
  deferredWork,
  runPolicy,
  appsDomain: config.APPS_DOMAIN ?? '',
  budgetMs: config.WAKE_BUDGET_S * 1000,
  holdLimits: { perContainer: config.WAKE_HOLDS_PER_CONTAINER, overall: config.WAKE_HOLDS_MAX },
  secret: async () => {
    if (!config.WAKE_SECRET_ARN) throw new Error('WAKE_SECRET_ARN is not set');
    const { SecretString } = await secrets.send(new GetSecretValueCommand({ SecretId: config.WAKE_SECRET_ARN }));
    if (!SecretString) throw new Error('The wake secret has no string value');
    return SecretString;
  },
});

/** Room to pass the app's answer back before the function's own timeout. */
const RESERVE_MS = 3_000;

/**
 * The wake endpoint's function URL (docs/routing.md, "Sleep and wake on AWS"): Caddy sends it
 * each request whose container has no route; it wakes a sleeping container, holds the request
 * until it answers, and forwards it.
 */
const wake = middy<LambdaFunctionURLEvent, LambdaFunctionURLResult>().handler(async (event, context) => {
  try {
    return await answerWakeRequest(event, endpoint, Date.now() + context.getRemainingTimeInMillis() - RESERVE_MS);
  } catch (error) {
    log.error('The wake endpoint failed', describeError(error));
    return {
      statusCode: 500,
      headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
      body: JSON.stringify({ error: { code: 'INTERNAL_ERROR', message: 'The wake endpoint failed; try again' } }),
    };
  }
});

export const handler = (event: LambdaFunctionURLEvent, context: Context): Promise<LambdaFunctionURLResult> =>
  withInvocationLog(context, { lambdaRequestId: context.awsRequestId }, () => wake(event, context));
