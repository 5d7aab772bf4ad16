import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { config } from '../config.js';

/** Created once per container and shared by every store in it. */
export const dynamoClient = new DynamoDBClient({
  region: config.AWS_REGION,
  ...(config.DYNAMODB_ENDPOINT ? { endpoint: config.DYNAMODB_ENDPOINT } : {}),
});

export const documentClient = DynamoDBDocumentClient.from(dynamoClient, {
  marshallOptions: { removeUndefinedValues: true },
});

export const tableName = config.TABLE_NAME;

/** True when a write failed only because its condition did not hold. */
export function isConditionFailure(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}

/**
 * True when a transaction was cancelled because one of its conditions did not hold
 * (as opposed to throttling or a conflicting transaction, which callers may retry).
 */
export function isTransactionConditionFailure(error: unknown): boolean {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return false;
  const reasons = (error as { CancellationReasons?: Array<{ Code?: string }> }).CancellationReasons ?? [];
  return reasons.some((reason) => reason.Code === 'ConditionalCheckFailed');
}

/** Cancellation reasons by position, to tell which item's condition failed. */
export function transactionCancellationCodes(error: unknown): Array<string | undefined> {
  const reasons = (error as { CancellationReasons?: Array<{ Code?: string }> }).CancellationReasons ?? [];
  return reasons.map((reason) => reason.Code);
}

const RETRYABLE_CANCELLATIONS = new Set(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded']);

/**
 * Sends a transaction, retrying when DynamoDB cancelled it only because another
 * transaction held one of its items at that moment (the SDK does not retry those).
 * Condition failures are final and propagate to the caller.
 */
export async function transactWrite(input: TransactWriteCommandInput, attempts = 4): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await documentClient.send(new TransactWriteCommand(input));
      return;
    } catch (error) {
      const codes = transactionCancellationCodes(error);
      const retryable =
        error instanceof Error &&
        error.name === 'TransactionCanceledException' &&
        !codes.includes('ConditionalCheckFailed') &&
        codes.some((code) => code !== undefined && RETRYABLE_CANCELLATIONS.has(code));
      if (!retryable || attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt * Math.random()));
    }
  }
}
