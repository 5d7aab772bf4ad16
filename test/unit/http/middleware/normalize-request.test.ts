import { describe, expect, it } from 'vitest';
import { toApiRequest } from '../../../../lib/http/middleware/normalize-request.js';
import { proxyEvent } from '../../../support/lambda-event.js';

describe('toApiRequest', () => {
  it('takes the origin from the domain API Gateway recorded, not from a client-sent X-Forwarded-Host', () => {
    const event = proxyEvent({
      path: '/api/v1/users',
      headers: { Host: 'abc.execute-api.eu-west-1.amazonaws.com', 'X-Forwarded-Host': 'evil.example', 'X-Forwarded-Proto': 'https' },
    });
    event.requestContext.domainName = 'api.example.com';
    const request = toApiRequest(event, 'r-1');
    expect(request.origin).toBe('https://api.example.com');
    expect(request.basePath).toBe('/prod');
  });

  it('lower-cases header names and reads cookies and a base64 body', () => {
    const event = proxyEvent({
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Cookie: 'a=1; sv_session=svss_x' },
      body: Buffer.from('{"x":1}').toString('base64'),
      isBase64Encoded: true,
    });
    const request = toApiRequest(event, 'r-2');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.cookies).toEqual({ a: '1', sv_session: 'svss_x' });
    expect(request.body).toBe('{"x":1}');
  });
});
