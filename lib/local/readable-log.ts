import { type LogLevelName, writeLinesWith } from '../log.js';

/**
 * The local stack's readable log mode (issue 37, item 1): one short line per event for a person
 * at a terminal (`12:04:05.123 INFO  Request handled  route=listContainers status=200`), where
 * the JSON lines Lambda and CloudWatch want run to 400 characters. LOG_FORMAT chooses; without
 * it, readable on a terminal and JSON otherwise (a pipe, a file, a supervisor).
 */

export const LOG_FORMATS = ['readable', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** LOG_FORMAT, else readable when stdout is a terminal; a value it does not know is refused at start. */
export function logFormatOf(setting: string | undefined, stdoutIsTerminal: boolean): LogFormat {
  if (setting === undefined || setting === '') return stdoutIsTerminal ? 'readable' : 'json';
  const format = LOG_FORMATS.find((known) => known === setting.toLowerCase());
  if (!format) throw new Error(`LOG_FORMAT must be ${LOG_FORMATS.join(' or ')}, got ${setting}`);
  return format;
}

/**
 * Fields a person reading along does not need on every line: the Lambda stand-in's own ids and
 * names. The request id stays, to find a line again in the JSON form.
 */
const LEFT_OUT = new Set(['function_request_id', 'function_name', 'function_arn', 'function_memory_size', 'cold_start', 'sampling_rate']);

const valueText = (value: unknown): string => {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
};

/** One event as a line: the time of day, the level, the message, then `name=value` for each field; a stack on the lines after. */
export function readableLine(level: LogLevelName, message: string, fields: Record<string, unknown>, at: Date): string {
  const { stack, ...rest } = fields;
  const pairs = Object.entries(rest)
    .filter(([name, value]) => !LEFT_OUT.has(name) && value !== undefined)
    .map(([name, value]) => `${name}=${valueText(value)}`);
  const line = [at.toISOString().slice(11, 23), level.toUpperCase().padEnd(5), message, ...pairs].join(' ');
  return typeof stack === 'string' ? `${line}\n${stack.replace(/^/gm, '    ')}` : line;
}

/** From now on, this process logs readable lines: info and debug on stdout, warn and error on stderr, as Powertools does. */
export function useReadableLogs(): void {
  writeLinesWith((level, message, fields) => {
    const stream = level === 'warn' || level === 'error' ? process.stderr : process.stdout;
    stream.write(`${readableLine(level, message, fields, new Date())}\n`);
  });
}
