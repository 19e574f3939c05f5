CREATE TABLE "stored_responses" (
	"owner_id" integer NOT NULL,
	"response_id" text NOT NULL,
	"account_id" integer NOT NULL,
	"items" text NOT NULL,
	"response" text,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "stored_responses_owner_id_response_id_pk" PRIMARY KEY("owner_id","response_id")
);
--> statement-breakpoint
ALTER TABLE "response_keys" ADD COLUMN "account_id" integer;--> statement-breakpoint
CREATE INDEX "stored_responses_expiry_idx" ON "stored_responses" USING btree ("expires_at");