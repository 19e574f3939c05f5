DROP INDEX "usage_records_account_time_idx";--> statement-breakpoint
CREATE INDEX "usage_records_time_brin" ON "usage_records" USING brin ("created_at");--> statement-breakpoint
ALTER TABLE "usage_records" DROP COLUMN "id";