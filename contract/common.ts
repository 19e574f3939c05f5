import { z } from 'zod';

/** Every stored ID is a PostgreSQL integer: a larger one names nothing and cannot be compared in a query. */
export const MAX_ID = 2_147_483_647;

/** Query parameters arrive as strings; list filters coerce them explicitly. */
export const pageQuery = {
  page: z.coerce.number().int().min(1).max(1_000_000).optional().meta({ description: 'Page number, 1-based. When only `size` is sent, page 1.' }),
  size: z.coerce.number().int().min(1).max(1000).optional().meta({ description: 'Page size (default 100, at most 1000)' }),
};

export const isoTime = z.string().meta({ description: 'RFC 3339 timestamp (UTC)', example: '2026-11-22T08:00:00.000Z' });

export const successFlag = z.literal(true);
