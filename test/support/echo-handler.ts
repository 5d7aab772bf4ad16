import type { APIGatewayProxyEvent, Context } from 'aws-lambda';

/**
 * A stand-in Lambda for testing the local server itself: it answers with the event it
 * received, or misbehaves as `?behave=` asks.
 */
export async function handler(event: APIGatewayProxyEvent, context: Context): Promise<unknown> {
  switch (event.queryStringParameters?.behave) {
    case 'throw':
      throw new Error('handler exploded');
    case 'garbage':
      return { statusCode: 'two hundred', body: 42 };
    case 'hang':
      return new Promise(() => {});
    case 'cookies':
      return {
        statusCode: 204,
        headers: { 'Cache-Control': 'no-store' },
        multiValueHeaders: { 'Set-Cookie': ['a=1; Path=/', 'b=2; Path=/'] },
      };
    case 'binary':
      return {
        statusCode: 200,
        headers: { 'Content-Type': 'application/octet-stream' },
        body: Buffer.from([0xff, 0x00, 0xfe]).toString('base64'),
        isBase64Encoded: true,
      };
    default:
      return {
        statusCode: 200,
        body: JSON.stringify({
          event,
          context: { functionName: context.functionName, remainingMs: context.getRemainingTimeInMillis() },
        }),
      };
  }
}
