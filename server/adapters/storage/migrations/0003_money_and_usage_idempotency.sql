CREATE TABLE "account_alerts" (
	"account_id" integer NOT NULL,
	"kind" text NOT NULL,
	"period" text NOT NULL,
	"raised_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "account_alerts_account_id_kind_period_pk" PRIMARY KEY("account_id","kind","period")
);
--> statement-breakpoint
CREATE TABLE "usage_batches" (
	"id" text PRIMARY KEY NOT NULL,
	"written_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "overdraft" numeric(24, 12) DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "usage_records" ADD COLUMN "request_id" text;--> statement-breakpoint
ALTER TABLE "account_alerts" ADD CONSTRAINT "account_alerts_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;