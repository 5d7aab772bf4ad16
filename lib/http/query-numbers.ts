import * as z from '../zod.js';

/**
 * A whole-number query parameter from 1 to `max` (`?limit=100`, `?minutes=60`, `?wait_s=10`),
 * `fallback` when it is not given. The digits are checked before they become a number, so
 * `1e3` or `10.5` is refused with the same message as `0`; `unit` names what it counts.
 */
export function wholeNumberParam(max: number, fallback: number, unit = '') {
  const digits = new RegExp(`^\\d{1,${String(max).length}}$`);
  return z._default(
    z.pipe(
      z.pipe(z.string().check(z.regex(digits, `must be a whole number${unit ? ` of ${unit}` : ''} from 1 to ${max}`)), z.transform(Number)),
      z.int().check(z.minimum(1, 'must be at least 1'), z.maximum(max, `must be at most ${max}`)),
    ),
    fallback,
  );
}
