import * as z from '../zod.js';
import { pageQuerySchema } from '../http/pagination.js';

/** Query of GET /api/v1/containers/{id}/logs: `limit` and `cursor` as for lists, plus `since`. */
export const logsQuerySchema = z.extend(pageQuerySchema, {
  since: z.optional(z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date and time, e.g. 2026-01-31T12:00:00Z' })),
});
