ALTER TABLE "usage_daily" ADD COLUMN "units" jsonb;--> statement-breakpoint
ALTER TABLE "usage_records" ADD COLUMN "units" jsonb;--> statement-breakpoint
ALTER TABLE "usage_subtree_daily" ADD COLUMN "units" jsonb;