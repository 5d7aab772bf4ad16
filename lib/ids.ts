import { randomBytes } from 'node:crypto';

/**
 * The clock's reading for the last id, the millisecond written into it and its 12-bit counter
 * (RFC 9562 §6.2, method 1): ids made in one millisecond still sort in the order they were made.
 */
let lastNow = -1;
let lastMs = -1;
let counter = 0;

/**
 * A UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, a 12-bit counter, then randomness. Keys
 * that end in one sort by creation time, which gives every list its newest-first order for free,
 * and "the later of two deploys wins" holds for two made within one millisecond by one process.
 */
export function newId(now: number = Date.now()): string {
  if (now === lastNow && counter < 0xfff) {
    counter += 1;
  } else if (now === lastNow) {
    // 4,096 ids in one millisecond: the next ones borrow the following millisecond, as §6.2 allows.
    lastMs += 1;
    counter = 0;
  } else {
    // A fresh reading starts the counter low and random, leaving room to count up.
    lastNow = now;
    lastMs = now;
    counter = randomBytes(2).readUInt16BE(0) & 0x3ff;
  }
  const ms = lastMs;
  const bytes = randomBytes(16);
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = 0x70 | (counter >> 8);
  bytes[7] = counter & 0xff;
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}
