import { z } from 'zod';
import { isoTime } from '../common';

const text = (max: number, what: string) => z.string()
  .max(max, `must be at most ${max} characters`)
  .refine((s) => s.trim().length > 0, 'must not be empty')
  .meta({ description: `${what}, at most ${max} characters` });

export const NEWS_DEFAULT_DAYS = { system: 7, targeted: 32 } as const;

export const NewsCreate = z.strictObject({
  title: text(100, 'Title'),
  content: text(1000, 'Content'),
  days: z.int().min(1).max(3650).optional()
    .meta({ description: `Days the entry stays visible (default ${NEWS_DEFAULT_DAYS.system} for system news, ${NEWS_DEFAULT_DAYS.targeted} for targeted news)` }),
}).meta({ id: 'NewsCreate' });

export const NewsTargetPath = z.object({
  target: z.string().min(1).max(1000).meta({ description: 'A user ID, a username, or a DNA path (`.1.42.`: that account and everything below it)' }),
});

export const NewsEntry = z.object({
  id: z.int(),
  scope: z.enum(['system', 'user', 'dna']),
  title: z.string(),
  content: z.string(),
  author_id: z.int(),
  target_id: z.int().nullable().meta({ description: 'The account a user-targeted entry is for' }),
  target_dna: z.string().nullable().meta({ description: 'The subtree a DNA-targeted entry is for' }),
  created_at: isoTime,
  expires_at: isoTime,
}).meta({ id: 'NewsEntry' });

export const NewsCreateResult = z.object({ success: z.literal(true), news: NewsEntry }).meta({ id: 'NewsCreateResult' });
export const NewsDeleteResult = z.object({
  success: z.literal(true),
  deleted: z.int().meta({ description: 'Entries removed' }),
}).meta({ id: 'NewsDeleteResult' });

export const NewsFeed = z.object({
  sys_news: z.array(NewsEntry).meta({ description: 'System-wide news' }),
  user_news: z.array(NewsEntry).meta({ description: 'News for this account' }),
  dna_news: z.array(NewsEntry).meta({ description: 'News for a subtree this account belongs to' }),
}).meta({ id: 'NewsFeed', description: 'Unexpired entries visible to the caller, newest first, at most 20 of each kind' });

export const NoQuery = z.strictObject({});

export type NewsCreate = z.infer<typeof NewsCreate>;
export type NewsEntry = z.infer<typeof NewsEntry>;
export type NewsCreateResult = z.infer<typeof NewsCreateResult>;
export type NewsDeleteResult = z.infer<typeof NewsDeleteResult>;
export type NewsFeed = z.infer<typeof NewsFeed>;
