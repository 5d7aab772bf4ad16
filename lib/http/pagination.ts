import * as z from '../zod.js';
import type { Page } from '../page.js';
import type { ApiRequest } from './api-request.js';
import { wholeNumberParam } from './query-numbers.js';
import { ok, type Reply } from './reply.js';

/** docs/api-rules.md: `limit` 1..1000 (default 100) and an opaque `cursor`. */
export const pageQuerySchema = z.strictObject({
  limit: wholeNumberParam(1000, 100),
  cursor: z.optional(z.string().check(z.minLength(1), z.maxLength(2048))),
});

export type PageQuery = z.infer<typeof pageQuerySchema>;

/** `200 { data: [...] }` with the next page's URL in a `Link: <…>; rel="next"` header. */
export function pageReply<T>(request: ApiRequest<unknown, PageQuery>, page: Page<T>): Reply {
  if (!page.nextCursor) return ok(page.items);
  const next = new URL(`${request.origin}${request.basePath}${request.path}`);
  next.searchParams.set('limit', String(request.query.limit));
  next.searchParams.set('cursor', page.nextCursor);
  return ok(page.items, { Link: `<${next.toString()}>; rel="next"` });
}
