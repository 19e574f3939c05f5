ALTER TABLE "usage_records" ADD COLUMN "duration_ms" integer;--> statement-breakpoint
ALTER TABLE "usage_records" ADD COLUMN "first_byte_ms" integer;