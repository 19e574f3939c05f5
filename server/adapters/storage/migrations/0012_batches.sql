CREATE TABLE "batch_files" (
	"id" text PRIMARY KEY NOT NULL,
	"owner_id" integer NOT NULL,
	"account_id" integer NOT NULL,
	"key_id" integer NOT NULL,
	"purpose" text NOT NULL,
	"filename" text DEFAULT '' NOT NULL,
	"bytes" bigint DEFAULT 0 NOT NULL,
	"model" text,
	"url" text,
	"lines" integer DEFAULT 0 NOT NULL,
	"input_bound" bigint DEFAULT 0 NOT NULL,
	"output_capped" bigint DEFAULT 0 NOT NULL,
	"uncapped_lines" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "gateway_batches" (
	"id" text PRIMARY KEY NOT NULL,
	"owner_id" integer NOT NULL,
	"account_id" integer NOT NULL,
	"dna" text NOT NULL,
	"key_id" integer NOT NULL,
	"level" integer,
	"api" text NOT NULL,
	"endpoint" text NOT NULL,
	"model" text NOT NULL,
	"input_file_id" text,
	"status" text NOT NULL,
	"lines" integer DEFAULT 0 NOT NULL,
	"completed_lines" integer DEFAULT 0 NOT NULL,
	"failed_lines" integer DEFAULT 0 NOT NULL,
	"reserved" numeric(24, 12) DEFAULT 0 NOT NULL,
	"billed" numeric(24, 12),
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"settled_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "usage_records" ADD COLUMN "batch_id" text;--> statement-breakpoint
ALTER TABLE "usage_records" ADD COLUMN "batch_lines" integer;--> statement-breakpoint
CREATE INDEX "batch_files_account_time_idx" ON "batch_files" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "gateway_batches_account_time_idx" ON "gateway_batches" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "gateway_batches_dna_idx" ON "gateway_batches" USING btree ("dna" text_pattern_ops);--> statement-breakpoint
CREATE INDEX "gateway_batches_open_idx" ON "gateway_batches" USING btree ("created_at") WHERE settled_at IS NULL;