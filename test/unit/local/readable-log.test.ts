import { describe, expect, it } from 'vitest';
import { logFormatOf, readableLine } from '../../../lib/local/readable-log.js';

describe('logFormatOf', () => {
  it('is readable on a terminal and JSON elsewhere unless LOG_FORMAT says, in any case', () => {
    expect(logFormatOf(undefined, true)).toBe('readable');
    expect(logFormatOf(undefined, false)).toBe('json');
    expect(logFormatOf('', true)).toBe('readable');
    expect(logFormatOf('JSON', true)).toBe('json');
    expect(logFormatOf('readable', false)).toBe('readable');
  });

  it('refuses a format it does not know, naming the ones it does', () => {
    expect(() => logFormatOf('pretty', true)).toThrow('LOG_FORMAT must be readable or json, got pretty');
  });
});

describe('readableLine', () => {
  const at = new Date('2026-11-28T09:04:05.123Z');

  it('writes the time of day, the level, the message and each field as name=value, quoting only what needs it', () => {
    const line = readableLine('info', 'Request handled', { route: 'listContainers', status: 200, note: 'two words', ids: ['a'] }, at);

    expect(line).toBe('09:04:05.123 INFO  Request handled route=listContainers status=200 note="two words" ids=["a"]');
  });

  it("leaves out the Lambda stand-in's own fields and puts a stack on indented lines after", () => {
    const line = readableLine(
      'error',
      'Handler failed',
      { function_name: 'listContainers', function_request_id: 'x', cold_start: false, errorName: 'Error', stack: 'Error: boom\n    at f' },
      at,
    );

    expect(line).toBe('09:04:05.123 ERROR Handler failed errorName=Error\n    Error: boom\n        at f');
  });
});
