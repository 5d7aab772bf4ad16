import type { APIGatewayProxyResult } from 'aws-lambda';
import type { Reply } from './reply.js';

export function toLambdaResult(reply: Reply): APIGatewayProxyResult {
  return {
    statusCode: reply.statusCode,
    headers: { 'X-Content-Type-Options': 'nosniff', ...reply.headers },
    ...(reply.cookies?.length ? { multiValueHeaders: { 'Set-Cookie': reply.cookies } } : {}),
    body: reply.body,
  };
}
