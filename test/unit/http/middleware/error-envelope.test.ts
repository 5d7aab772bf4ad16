import { describe, expect, it } from 'vitest';
import {
  BadRequestError,
  InternalError,
  InvalidClientError,
  invalidGrant,
  invalidRequest,
  invalidScope,
  PayloadTooLargeError,
  unauthorizedClient,
  unsupportedGrantType,
  unsupportedTokenType,
} from '../../../../lib/errors.js';
import { errorFormatFor, errorReply } from '../../../../lib/http/middleware/error-envelope.js';

const FORM = 'application/x-www-form-urlencoded';

describe('errorFormatFor', () => {
  it('gives RFC 6749 errors only to form-encoded requests at a route that declares them', () => {
    expect(errorFormatFor({ rfc6749Errors: true }, FORM)).toBe('rfc6749');
    expect(errorFormatFor({ rfc6749Errors: true }, 'Application/X-WWW-Form-Urlencoded; charset=UTF-8')).toBe('rfc6749');
    expect(errorFormatFor({ rfc6749Errors: true }, 'application/json')).toBe('envelope');
    expect(errorFormatFor({ rfc6749Errors: true }, undefined)).toBe('envelope');
    expect(errorFormatFor({}, FORM)).toBe('envelope');
    expect(errorFormatFor(undefined, FORM)).toBe('envelope');
  });
});

describe('errorReply', () => {
  it.each([
    ['invalid_request', invalidRequest('grant_type is required'), 400, 'BAD_REQUEST'],
    ['invalid_grant', invalidGrant('The refresh token is invalid'), 400, 'BAD_REQUEST'],
    ['invalid_scope', invalidScope('scope may not exceed what the user granted'), 400, 'BAD_REQUEST'],
    ['unauthorized_client', unauthorizedClient('This token was not issued to this client'), 400, 'BAD_REQUEST'],
    ['unsupported_grant_type', unsupportedGrantType('grant_type must be authorization_code or refresh_token'), 400, 'BAD_REQUEST'],
    ['unsupported_token_type', unsupportedTokenType('Only OAuth access and refresh tokens are revoked here'), 400, 'BAD_REQUEST'],
    ['invalid_client', new InvalidClientError('Invalid client credentials', false), 401, 'UNAUTHORIZED'],
  ])('writes %s as RFC 6749 section 5.2 asks, and as the unchanged envelope for JSON', (oauthCode, error, status, envelopeCode) => {
    const rfc = errorReply(error, 'req-1', 'rfc6749');
    expect(rfc.statusCode).toBe(status);
    expect(JSON.parse(rfc.body)).toEqual({ error: oauthCode, error_description: error.message });
    expect(rfc.headers).toMatchObject({
      'Content-Type': 'application/json; charset=utf-8',
      'Cache-Control': 'no-store',
      Pragma: 'no-cache',
    });

    const envelope = errorReply(error, 'req-1', 'envelope');
    expect(envelope.statusCode).toBe(status);
    expect(JSON.parse(envelope.body)).toEqual({ error: { code: envelopeCode, message: error.message } });
    expect(envelope.headers['Cache-Control']).toBe('no-store');
  });

  it('challenges a failed HTTP Basic authentication in both formats, and only that', () => {
    const basic = new InvalidClientError('Invalid client credentials', true);
    expect(errorReply(basic, 'r', 'rfc6749').headers['WWW-Authenticate']).toBe('Basic realm="oauth", charset="UTF-8"');
    expect(errorReply(basic, 'r', 'envelope').headers['WWW-Authenticate']).toBe('Basic realm="oauth", charset="UTF-8"');
    expect(errorReply(new InvalidClientError('x', false), 'r', 'rfc6749').headers['WWW-Authenticate']).toBeUndefined();
  });

  it('names any other input error invalid_request, and keeps the envelope for what RFC 6749 has no code for', () => {
    expect(JSON.parse(errorReply(new BadRequestError('Parameter x is repeated'), 'r', 'rfc6749').body)).toEqual({
      error: 'invalid_request',
      error_description: 'Parameter x is repeated',
    });
    const tooLarge = errorReply(new PayloadTooLargeError('too big'), 'r', 'rfc6749');
    expect([tooLarge.statusCode, JSON.parse(tooLarge.body).error.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    const crash = errorReply(new Error('secret detail'), 'r', 'rfc6749');
    expect([crash.statusCode, JSON.parse(crash.body).error.code]).toEqual([500, 'INTERNAL_ERROR']);
    expect(crash.body).not.toContain('secret detail');
    expect(errorReply(new InternalError(), 'r', 'rfc6749').statusCode).toBe(500);
  });

  it('keeps error_description within the characters RFC 6749 allows', () => {
    const reply = errorReply(invalidRequest('Parameter "é\\x" is repeated'), 'r', 'rfc6749');
    expect(JSON.parse(reply.body).error_description).toBe('Parameter ???x? is repeated');
  });
});

describe('errorReply with field details', () => {
  it('writes the fields a 400 names as error.details beside code and message', () => {
    const error = new BadRequestError('Invalid request body: memory_mb: too small', [{ field: 'memory_mb', message: 'too small' }]);

    const reply = errorReply(error, 'r', 'envelope');

    expect(reply.statusCode).toBe(400);
    expect(JSON.parse(reply.body)).toEqual({
      error: {
        code: 'BAD_REQUEST',
        message: 'Invalid request body: memory_mb: too small',
        details: [{ field: 'memory_mb', message: 'too small' }],
      },
    });
  });

  it('writes no details key for an error that names no field', () => {
    expect(Object.keys(JSON.parse(errorReply(new BadRequestError('Malformed'), 'r', 'envelope').body).error)).toEqual(['code', 'message']);
  });

  it('keeps RFC 6749 bodies as they are: error and error_description only', () => {
    const error = new BadRequestError('Invalid request body: scope: bad', [{ field: 'scope', message: 'bad' }]);

    expect(Object.keys(JSON.parse(errorReply(error, 'r', 'rfc6749').body))).toEqual(['error', 'error_description']);
  });
});
